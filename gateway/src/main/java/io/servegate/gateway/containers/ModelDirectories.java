package io.servegate.gateway.containers;

import io.servegate.gateway.registry.Names;
import java.io.IOException;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The directories an operator lets model files be loaded from. Some model formats are code (a
 * pickle runs whatever it names when it is loaded), so a model path given through the admin API
 * is a way to run code as the container's user unless it is confined: the variables of a
 * command's {@code env} that name model files ({@code MODEL_PATH}) must name a file that, with
 * every symbolic link resolved, exists inside one of these directories. Relative paths are
 * resolved against the gateway's working directory, which is also its child processes'.
 *
 * <p>The containers check again when they load ({@link #ENV}): a file may change between this
 * check and a restart, and only the container sees the file it opens.
 */
public final class ModelDirectories {

    /** The variable the containers read the directories from, separated by {@code :}. */
    public static final String ENV = "SERVEGATE_MODEL_DIRS";
    /** The project's own model directories, relative to the repository root, as the default commands are. */
    public static final List<String> DEFAULT = List.of("containers/onnx/models", "containers/sklearn",
            "containers/pytorch", "containers/image-classifier");

    private static final String PROPERTY = "servegate.containers.model-directories";
    private static final int SHOWN = 512;

    private final List<Path> directories;
    private final List<String> variables;

    /**
     * @param directories absolute or relative to the working directory; an empty list allows no model path
     * @param variables   the env variables that name model files or directories
     */
    public ModelDirectories(List<String> directories, List<String> variables) {
        for (String d : directories) {
            if (d.isBlank() || d.indexOf(':') >= 0 || d.indexOf('\0') >= 0) {
                throw new IllegalArgumentException(PROPERTY + " entries must be non-empty paths without ':' (the "
                        + ENV + " separator), got '" + d + "'");
            }
        }
        this.directories = directories.stream().map(d -> Path.of(d).toAbsolutePath().normalize()).toList();
        this.variables = List.copyOf(variables);
    }

    /**
     * @return why a command with this {@code env} may not run: {@link #ENV} set by the caller, or
     *         a model path outside the directories; empty if it may
     */
    public Optional<String> refusal(Map<String, String> env) {
        if (env.containsKey(ENV)) {
            return Optional.of(ENV + " is set by the container manager from " + PROPERTY + ", not by deploy_model");
        }
        return variables.stream().filter(env::containsKey).map(v -> refusal(v + "=", env.get(v)))
                .flatMap(Optional::stream).findFirst();
    }

    /**
     * @param named what names the path, as it precedes the path in the answer ({@code MODEL_PATH=},
     *              {@code argument --weights })
     * @return why {@code path} may not be loaded as a model, or empty if it may
     */
    Optional<String> refusal(String named, String path) {
        String shown = named + Names.brief(path, SHOWN);
        Path real;
        try {
            real = Path.of(path).toRealPath();
        } catch (NoSuchFileException | InvalidPathException e) {
            return Optional.of(shown + " is not an existing file: model paths must name files inside the model "
                    + "directories (" + PROPERTY + ": " + this + ")");
        } catch (IOException e) {
            return Optional.of(shown + " cannot be resolved (" + e.getClass().getSimpleName() + ")");
        }
        for (Path dir : resolved()) {
            if (real.startsWith(dir)) {
                return Optional.empty();
            }
        }
        String target = real.toString().equals(path) ? "" : ", which is " + Names.brief(real.toString(), SHOWN) + ",";
        return Optional.of(shown + target + " is outside the model directories in " + PROPERTY + ": " + this
                + "; only files there may be loaded as models");
    }

    /** The value of {@link #ENV} for a container: the directories, links resolved, separated by {@code :}. */
    public String envValue() {
        return resolved().stream().map(Path::toString).collect(Collectors.joining(":"));
    }

    /** The directories with links resolved, at the time of asking; those that do not exist are left out. */
    private List<Path> resolved() {
        return directories.stream().flatMap(d -> {
            try {
                return java.util.stream.Stream.of(d.toRealPath());
            } catch (IOException e) {
                return java.util.stream.Stream.empty();
            }
        }).toList();
    }

    @Override
    public String toString() {
        return directories.isEmpty() ? "(none)" : directories.toString();
    }
}

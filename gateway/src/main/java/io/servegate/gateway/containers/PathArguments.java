package io.servegate.gateway.containers;

import io.servegate.gateway.registry.Names;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The options of allowed commands whose values are paths, checked like {@code MODEL_PATH}: an
 * allowed program started with {@code --profile-out /home/gateway/.bashrc} would otherwise
 * overwrite whatever the gateway's user can write, again on every restart. Per program (an
 * argument of the allowed prefix a command starts with, such as
 * {@code containers/image-classifier/serve.py}):
 * <ul>
 *   <li>{@code model} options name files the program reads: each value (comma-separated parts
 *       each) must be an existing file or directory inside the {@link ModelDirectories};
 *   <li>{@code output} options name files the program writes: the file, with its directory's
 *       links resolved, must lie inside one of the output directories, and must not be a link
 *       or a directory itself. With no output directory configured, every output option is
 *       refused.
 * </ul>
 * Both {@code --option value} and {@code --option=value} are recognized. Programs must not accept
 * abbreviated options (Python's {@code argparse} does unless {@code allow_abbrev=False}), or an
 * abbreviation would slip past this check.
 */
public final class PathArguments {

    /** The property naming the output directories. */
    public static final String OUTPUT_PROPERTY = "servegate.containers.process.output-directories";
    private static final int SHOWN = 512;

    /**
     * The path options of one program.
     *
     * @param model  options whose value is a file or directory the program reads
     * @param output options whose value is a file the program writes
     */
    public record Options(List<String> model, List<String> output) {

        public Options {
            model = model == null ? List.of() : List.copyOf(model);
            output = output == null ? List.of() : List.copyOf(output);
        }
    }

    private final Map<String, Options> byProgram;
    private final List<Path> outputDirectories;

    /**
     * @param byProgram         path options by program (an argument of an allowed prefix)
     * @param outputDirectories where output options may write; absolute or relative to the working directory
     */
    public PathArguments(Map<String, Options> byProgram, List<String> outputDirectories) {
        this.byProgram = Map.copyOf(byProgram);
        this.outputDirectories = outputDirectories.stream().map(d -> Path.of(d).toAbsolutePath()).toList();
    }

    /** The path options of the project's containers, as {@link ProcessCommandPolicy#defaultCommands()} runs them. */
    public static Map<String, Options> defaults() {
        return Map.of(
                "containers/onnx/target/onnx-container.jar",
                new Options(List.of("--model", "--model-dir", "--models"), List.of()),
                "containers/image-classifier/serve.py", new Options(List.of("--weights"), List.of("--profile-out")));
    }

    /**
     * @param command      the whole command
     * @param prefixLength how many leading arguments are the allowed prefix it starts with
     * @param models       where model options may point
     * @return why the command's path arguments may not be used, or empty if they may
     */
    Optional<String> refusal(List<String> command, int prefixLength, ModelDirectories models) {
        for (String program : command.subList(0, prefixLength)) {
            Options options = byProgram.get(program);
            if (options == null) {
                continue;
            }
            for (int i = prefixLength; i < command.size(); i++) {
                String arg = command.get(i);
                for (boolean output : new boolean[] {false, true}) {
                    for (String option : output ? options.output() : options.model()) {
                        String value = arg.equals(option) && i + 1 < command.size() ? command.get(i + 1)
                                : arg.startsWith(option + "=") ? arg.substring(option.length() + 1) : null;
                        Optional<String> refusal = value == null ? Optional.empty()
                                : output ? outputRefusal(option, value) : modelRefusal(option, value, models);
                        if (refusal.isPresent()) {
                            return refusal;
                        }
                    }
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<String> modelRefusal(String option, String value, ModelDirectories models) {
        for (String part : value.split(",", -1)) {
            Optional<String> refusal = models.refusal("argument " + option + " ", part);
            if (refusal.isPresent()) {
                return refusal;
            }
        }
        return Optional.empty();
    }

    private Optional<String> outputRefusal(String option, String value) {
        String shown = "argument " + option + " " + Names.brief(value, SHOWN);
        Path file;
        try {
            // not normalized: the directory's links are resolved first, as the OS resolves "link/.."
            Path path = Path.of(value).toAbsolutePath();
            String name = path.getFileName() == null ? "" : path.getFileName().toString();
            if (name.equals(".") || name.equals("..") || path.getParent() == null) {
                return Optional.of(shown + " does not name a file");
            }
            file = path.getParent().toRealPath().resolve(name);
        } catch (InvalidPathException | IOException e) {
            return Optional.of(shown + " is not in an existing directory: files a container writes must lie "
                    + "inside the output directories (" + OUTPUT_PROPERTY + ": " + shownDirectories() + ")");
        }
        if (Files.isSymbolicLink(file) || Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.of(shown + " is a link or a directory; it must name a file");
        }
        for (Path dir : outputDirectories) {
            try {
                if (file.startsWith(dir.toRealPath())) {
                    return Optional.empty();
                }
            } catch (IOException e) {
                // a directory that does not exist holds nothing
            }
        }
        String target = file.toString().equals(value) ? "" : ", which is " + Names.brief(file.toString(), SHOWN) + ",";
        return Optional.of(shown + target + " is outside the output directories in " + OUTPUT_PROPERTY + ": "
                + shownDirectories() + "; a container may write files only there");
    }

    private String shownDirectories() {
        return outputDirectories.isEmpty() ? "(none)" : outputDirectories.toString();
    }
}

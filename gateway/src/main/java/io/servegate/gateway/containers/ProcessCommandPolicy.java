package io.servegate.gateway.containers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What {@code deploy_model} may have the {@code process} manager run, which it does as the
 * gateway's own user. A command is allowed when its leading arguments equal, one for one, one of
 * the allowed argument prefixes (an executable alone is a prefix of one element); every variable
 * in its {@code env} must be one of the allowed names, since variables such as
 * {@code LD_PRELOAD}, {@code JAVA_TOOL_OPTIONS} or {@code PYTHONPATH} change what an allowed
 * command loads; the variables that name model files must name files in the operator's
 * {@link ModelDirectories}; and the options that name files must name them where
 * {@link PathArguments} allows. Unless the operator opts out, the admin API must also have a token:
 * without one, any local user who can reach the loopback admin port could run programs.
 *
 * <p>The built-in prefixes ({@link #defaultCommands()}) are the project's own containers, run from
 * the repository root as the demo and the documentation run them.
 */
public final class ProcessCommandPolicy {

    private static final List<String> JARS = List.of("containers/onnx/target/onnx-container.jar",
            "containers/emulated/target/emulated-container.jar", "containers/noop/target/noop-container.jar");
    private static final List<String> PYTHON_SCRIPTS = List.of("containers/sklearn/serve.py",
            "containers/pytorch/serve.py", "containers/image-classifier/serve.py");
    private static final String PREFIXES_PROPERTY = "servegate.containers.process.allowed-commands";
    private static final String ENV_PROPERTY = "servegate.containers.process.allowed-env";

    private final List<List<String>> allowedCommands;
    private final Set<String> allowedEnv;
    private final boolean adminTokenSet;
    private final boolean requireAdminToken;
    private final ModelDirectories modelDirectories;
    private final PathArguments pathArguments;

    /**
     * @param allowedCommands   argument prefixes; an empty list allows no command
     * @param allowedEnv        variable names {@code env} may set
     * @param adminTokenSet     whether the admin API checks a bearer token
     * @param requireAdminToken refuse every command while no admin token is set
     * @param modelDirectories  where the model paths in {@code env} and in model path arguments must lie
     * @param pathArguments     the allowed programs' options that name files
     */
    public ProcessCommandPolicy(List<List<String>> allowedCommands, List<String> allowedEnv, boolean adminTokenSet,
            boolean requireAdminToken, ModelDirectories modelDirectories, PathArguments pathArguments) {
        for (List<String> prefix : allowedCommands) {
            if (prefix.isEmpty() || prefix.stream().anyMatch(String::isEmpty)) {
                throw new IllegalArgumentException(PREFIXES_PROPERTY + " entries must be non-empty lists of "
                        + "non-empty arguments, got " + prefix);
            }
        }
        this.allowedCommands = allowedCommands.stream().map(List::copyOf).toList();
        this.allowedEnv = new LinkedHashSet<>(allowedEnv);
        this.adminTokenSet = adminTokenSet;
        this.requireAdminToken = requireAdminToken;
        this.modelDirectories = modelDirectories;
        this.pathArguments = pathArguments;
    }

    /**
     * The project's containers: {@code java -jar} of the Java containers' jars (with {@code java}
     * from the PATH or this gateway's own JVM, which the demo uses) and Debian's
     * {@code /usr/bin/python3} with the Python containers' scripts, paths relative to the
     * repository root.
     */
    public static List<List<String>> defaultCommands() {
        String ownJava = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<List<String>> prefixes = new ArrayList<>();
        for (String java : new LinkedHashSet<>(List.of("java", ownJava))) {
            JARS.forEach(jar -> prefixes.add(List.of(java, "-jar", jar)));
        }
        PYTHON_SCRIPTS.forEach(script -> prefixes.add(List.of("/usr/bin/python3", script)));
        return List.copyOf(prefixes);
    }

    /** @return why the command may not run, or empty if it may */
    public Optional<String> refusal(List<String> command, Map<String, String> env) {
        if (requireAdminToken && !adminTokenSet) {
            return Optional.of("deploy_model with a 'command' runs it as the gateway's user, so it needs the admin "
                    + "API's token: set servegate.admin.token (or token-file), or opt out with "
                    + "servegate.containers.process.require-admin-token=false");
        }
        Optional<List<String>> allowed = allowedCommands.stream().filter(prefix -> startsWith(command, prefix))
                .findFirst();
        if (allowed.isEmpty()) {
            return Optional.of("command " + render(command) + " is not allowed: it must start with one of the "
                    + "argument prefixes in " + PREFIXES_PROPERTY + ": " + allowedCommands.stream()
                            .map(ProcessCommandPolicy::render).collect(Collectors.joining(", "))
                    + (allowedCommands.isEmpty() ? "(none)" : ""));
        }
        Optional<String> modelPath = modelDirectories.refusal(env)
                .or(() -> pathArguments.refusal(command, allowed.get().size(), modelDirectories));
        if (modelPath.isPresent()) {
            return modelPath;
        }
        for (String name : env.keySet()) {
            if (!allowedEnv.contains(name)) {
                return Optional.of("env variable '" + name + "' is not allowed with a command: it must be one of "
                        + ENV_PROPERTY + ": " + allowedEnv);
            }
        }
        return Optional.empty();
    }

    private static boolean startsWith(List<String> command, List<String> prefix) {
        return command.size() >= prefix.size() && command.subList(0, prefix.size()).equals(prefix);
    }

    /** A command as {@code [a, b]}, each argument cut short and anything outside printable ASCII escaped. */
    private static String render(List<String> command) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < Math.min(command.size(), 8); i++) {
            String arg = command.get(i);
            sb.append(i > 0 ? ", " : "");
            for (int j = 0; j < Math.min(arg.length(), 80); j++) {
                char c = arg.charAt(j);
                sb.append(c < 0x20 || c > 0x7e ? String.format("\\u%04x", (int) c) : String.valueOf(c));
            }
            sb.append(arg.length() > 80 ? "..." : "");
        }
        return sb.append(command.size() > 8 ? ", ...]" : "]").toString();
    }
}

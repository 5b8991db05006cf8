package io.servegate.containers.emulated;

import io.servegate.sdk.ContainerOptions;
import io.servegate.sdk.ModelContainer;
import io.servegate.sdk.TensorType;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Serves an {@link EmulatedPredictor}: a model whose batches take β + α·b milliseconds. */
@Command(name = "emulated-container",
        description = "Emulates a GPU model: a batch of b takes beta + alpha*b ms, then gets deterministic labels.")
public final class EmulatedContainer implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ContainerOptions options;


    @Option(names = "--beta-ms", defaultValue = "${env:BETA_MS:-5}",
            description = "Fixed cost of a batch in ms (env BETA_MS, default ${DEFAULT-VALUE}).")
    double betaMs;

    @Option(names = "--alpha-ms", defaultValue = "${env:ALPHA_MS:-0.5}",
            description = "Cost per input of a batch in ms (env ALPHA_MS, default ${DEFAULT-VALUE}).")
    double alphaMs;

    @Option(names = "--classes", defaultValue = "${env:CLASSES:-10}",
            description = "Number of labels (env CLASSES, default ${DEFAULT-VALUE}).")
    int classes;

    @Option(names = "--input-type", defaultValue = "${env:INPUT_TYPE:-floats}",
            description = "Clipper input type: ints, floats, doubles, bytes or strings (env INPUT_TYPE, "
                    + "default ${DEFAULT-VALUE}).")
    String inputType;

    @Option(names = "--fault", defaultValue = "none",
            description = "Fault injected on the wire while the fault window is open: none, garbage (undecodable "
                    + "output tensor) or wrong-count (one output too few). Default ${DEFAULT-VALUE}.")
    String fault;

    @Option(names = "--fault-after-ms", defaultValue = "0",
            description = "The fault window opens this long after start (default ${DEFAULT-VALUE}).")
    long faultAfterMs;

    @Option(names = "--fault-for-ms", defaultValue = "-1",
            description = "The fault window stays open this long; negative = forever (default ${DEFAULT-VALUE}).")
    long faultForMs;

    @Option(names = "--fault-probability", defaultValue = "1",
            description = "Share of batches hit while the fault window is open (default ${DEFAULT-VALUE}).")
    double faultProbability;

    @Option(names = "--fault-file",
            description = "If set, the fault window is open only while this file exists.")
    java.nio.file.Path faultFile;

    @Option(names = "--slow-factor", defaultValue = "1",
            description = "Batches take this many times longer while the slow window is open (default ${DEFAULT-VALUE}).")
    double slowFactor;

    @Option(names = "--slow-after-ms", defaultValue = "0",
            description = "The slow window opens this long after start (default ${DEFAULT-VALUE}).")
    long slowAfterMs;

    @Option(names = "--slow-for-ms", defaultValue = "-1",
            description = "The slow window stays open this long; negative = forever (default ${DEFAULT-VALUE}).")
    long slowForMs;

    @Option(names = "--slow-file",
            description = "If set, the slow window is open only while this file exists.")
    java.nio.file.Path slowFile;

    public static void main(String[] args) {
        System.exit(new CommandLine(new EmulatedContainer()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        TensorType<?> type;
        try {
            type = TensorType.forName(inputType);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        serve(type);
        return 0;
    }

    private <X> void serve(TensorType<X> type) throws Exception {
        long start = System.nanoTime();
        EmulatedPredictor<X> predictor;
        ModelContainer.Builder<X, String> builder;
        try {
            FaultWindow slow = new FaultWindow(start, slowAfterMs, slowForMs, 1, slowFile);
            if (!(slowFactor > 0) || Double.isInfinite(slowFactor)) {
                throw new IllegalArgumentException("--slow-factor must be positive, got " + slowFactor);
            }
            predictor = new EmulatedPredictor<>(betaMs, alphaMs, classes, () -> slow.hits() ? slowFactor : 1);
            builder = options.applyTo(ModelContainer.builder(type, TensorType.STRINGS, predictor));
            if (!"none".equals(fault)) {
                WireFaults.Kind kind = switch (fault) {
                    case "garbage" -> WireFaults.Kind.GARBAGE;
                    case "wrong-count" -> WireFaults.Kind.WRONG_COUNT;
                    default -> throw new IllegalArgumentException(
                            "--fault must be none, garbage or wrong-count, got '" + fault + "'");
                };
                builder.interceptor(new WireFaults(kind, new FaultWindow(start, faultAfterMs, faultForMs,
                        faultProbability, faultFile)));
            }
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        builder.build().runUntilShutdown();
    }
}

package io.servegate.containers.emulated;

import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ContainerOptions;
import io.servegate.sdk.ModelContainer;
import io.servegate.sdk.Predictor;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Serves an {@link EmulatedPredictor}: a model whose batches take β + α·b milliseconds; with
 * {@code --models N}, N of them loaded on demand, each load taking {@code --load-ms} and each
 * model {@code --model-size-bytes} of the memory budget ({@link EmulatedModelRepository}).
 */
@Command(name = "emulated-container",
        description = "Emulates a GPU model: a batch of b takes beta + alpha*b ms (plus its input bytes / --bytes-per-ms, "
                + "times any --jitter-sigma, plus --cold-batch-ms the first time its size runs, plus any --stall-ms it "
                + "meets), then gets deterministic labels; with --models N, N such models loaded on demand within "
                + "--memory-budget-bytes.")
public final class EmulatedContainer implements Callable<Integer> {

    private static final String RAISE_ON_VALUE = "raise-on-value=";

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

    @Option(names = "--input-shape", split = ",", defaultValue = "${env:INPUT_SHAPE}",
            description = "The shape of one input after the batch dimension, e.g. 3,8,8, declared in the model's "
                    + "metadata (a bytes input as UINT8) and enforced: other inputs fail their batch with "
                    + "INVALID_ARGUMENT (env INPUT_SHAPE; default: any).")
    java.util.List<Long> inputShape;

    @Option(names = "--models", defaultValue = "${env:MODELS:-0}",
            description = "Serve this many models, <name>-0 … <name>-(N-1), loaded on first use or on request; "
                    + "0 serves the one model --name (env MODELS, default ${DEFAULT-VALUE}).")
    int models;

    @Option(names = "--load-ms", defaultValue = "${env:LOAD_MS:-100}",
            description = "With --models: how long loading a model takes, in ms (env LOAD_MS, default ${DEFAULT-VALUE}).")
    double loadMs;

    @Option(names = "--model-size-bytes", defaultValue = "${env:MODEL_SIZE_BYTES:-104857600}",
            description = "With --models: the size of each loaded model against --memory-budget-bytes "
                    + "(env MODEL_SIZE_BYTES, default ${DEFAULT-VALUE}).")
    long modelSizeBytes;

    @Option(names = "--fault", defaultValue = "none",
            description = "Fault injected on the wire while the fault window is open: none, garbage (undecodable "
                    + "output tensor) or wrong-count (one output too few); or raise-on-value=V: the model raises on "
                    + "every batch with a row holding V, whatever the window (see --row-errors). "
                    + "Default ${DEFAULT-VALUE}.")
    String fault;

    @Option(names = "--row-errors", defaultValue = "true", arity = "1",
            description = "Whether a batch the model raises on is split and its failed rows reported as per-row "
                    + "errors (servegate_row_errors); false fails the whole batch INVALID_ARGUMENT, as an OIP server "
                    + "without per-row errors does (default ${DEFAULT-VALUE}).")
    boolean rowErrors;

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

    @Option(names = "--bytes-per-ms", defaultValue = "${env:BYTES_PER_MS:-0}",
            description = "Each batch also takes its input bytes / this many ms, as a host-to-device copy does "
                    + "(env BYTES_PER_MS; default ${DEFAULT-VALUE}: no transfer time).")
    double bytesPerMs;

    @Option(names = "--stall-ms", defaultValue = "${env:STALL_MS:-0}",
            description = "A stall this long every --stall-every-ms: batches running or arriving during it wait "
                    + "(env STALL_MS; default ${DEFAULT-VALUE}: none).")
    double stallMs;

    @Option(names = "--stall-every-ms", defaultValue = "${env:STALL_EVERY_MS:-5000}",
            description = "Period of the stalls, the first one this long after start (env STALL_EVERY_MS, "
                    + "default ${DEFAULT-VALUE}).")
    double stallEveryMs;

    @Option(names = "--cold-batch-ms", defaultValue = "${env:COLD_BATCH_MS:-0}",
            description = "The first batch of each size takes this much longer, as a GPU autotuning the shape does; "
                    + "the SDK's warm-up pays it for the sizes it runs (env COLD_BATCH_MS; default ${DEFAULT-VALUE}).")
    double coldBatchMs;

    @Option(names = "--jitter-sigma", defaultValue = "${env:JITTER_SIGMA:-0}",
            description = "Each batch's time times exp(sigma*Z - sigma^2/2), lognormal with mean 1: a heavy tail "
                    + "(env JITTER_SIGMA; default ${DEFAULT-VALUE}: none).")
    double jitterSigma;

    @Option(names = "--seed", defaultValue = "${env:SEED:-1}",
            description = "Seed of the jitter (env SEED; default ${DEFAULT-VALUE}).")
    long seed;

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
        ModelContainer.Builder<X, String> builder;
        ModelContainer<X, String> container;
        try {
            FaultWindow slow = new FaultWindow(start, slowAfterMs, slowForMs, 1, slowFile);
            if (!(slowFactor > 0) || Double.isInfinite(slowFactor)) {
                throw new IllegalArgumentException("--slow-factor must be positive, got " + slowFactor);
            }
            java.util.function.DoubleSupplier slowdown = () -> slow.hits() ? slowFactor : 1;
            Pathologies pathologies = new Pathologies(bytesPerMs,
                    new Stalls(start, Math.round(stallEveryMs * 1e6), Math.round(stallMs * 1e6)),
                    Math.round(coldBatchMs * 1e6), jitterSigma, seed);
            String poison = fault.startsWith(RAISE_ON_VALUE) ? fault.substring(RAISE_ON_VALUE.length()) : null;
            Supplier<Predictor<X, String>> model = () -> {
                EmulatedPredictor<X> emulated = new EmulatedPredictor<>(betaMs, alphaMs, classes, slowdown,
                        pathologies);
                return poison == null ? emulated : new PoisonedPredictor<>(emulated, poison);
            };
            if (models < 0) {
                throw new IllegalArgumentException("--models must be 0 or more, got " + models);
            } else if (models == 0) {
                builder = options.applyTo(ModelContainer.builder(type, TensorType.STRINGS, model.get()));
            } else {
                String prefix = options.name() == null ? "emulated" : options.name();
                builder = options.applyTo(ModelContainer.builder(type, TensorType.STRINGS,
                        new EmulatedModelRepository<>(
                                EmulatedModelRepository.numbered(prefix, models, options.version()),
                                modelSizeBytes, loadMs,
                                model)));
            }
            if (inputShape != null) {
                builder.inputShape(inputShape); // every model of a repository takes this shape
            }
            builder.isolateRows(rowErrors);
            if (!"none".equals(fault) && poison == null) {
                WireFaults.Kind kind = switch (fault) {
                    case "garbage" -> WireFaults.Kind.GARBAGE;
                    case "wrong-count" -> WireFaults.Kind.WRONG_COUNT;
                    default -> throw new IllegalArgumentException(
                            "--fault must be none, garbage, wrong-count or raise-on-value=V, got '" + fault + "'");
                };
                builder.interceptor(new WireFaults(kind, new FaultWindow(start, faultAfterMs, faultForMs,
                        faultProbability, faultFile)));
            }
            container = builder.build();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        container.runUntilShutdown();
    }
}

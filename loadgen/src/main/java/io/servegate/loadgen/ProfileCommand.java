package io.servegate.loadgen;

import io.servegate.containers.emulated.EmulatedPredictor;
import io.servegate.sdk.ContainerClient;
import io.servegate.sdk.InferResult;
import io.servegate.sdk.ModelContainer;
import io.servegate.sdk.TensorType;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Records a model container's service time per batch size, for the simulator's measured latency
 * ({@code bin/sim --profile FILE}) and, one file per hardware kind, the pipeline planner's model
 * profiles ({@code bin/sim plan}). Sends batches of 1, 2, 4, … up to a limit, one at a time (so
 * none waits behind another), several times each after a warm-up, and writes the container's own
 * reported time ({@code servegate_service_time_ns}; the client's round trip where it reports
 * none) in the simulator's profile format: a header {@code batch_size,service_ns} and one sample
 * per line, after {@code #} comments saying what was measured and when.
 */
@Command(name = "profile", mixinStandardHelpOptions = true,
        description = "Records a container's service time per batch size to a file the simulator reads.")
public final class ProfileCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--target", description = "Container address host:port (not with --start-emulated).")
    String target;

    @Option(names = "--start-emulated", description = "Start the emulated container (beta + alpha*b) in this JVM and profile it.")
    boolean startEmulated;

    @Option(names = "--beta-ms", defaultValue = "5", description = "Emulated fixed cost per batch (default ${DEFAULT-VALUE}).")
    double betaMs;

    @Option(names = "--alpha-ms", defaultValue = "0.5", description = "Emulated cost per input (default ${DEFAULT-VALUE}).")
    double alphaMs;

    @Option(names = "--model", defaultValue = "emulated", description = "Model name (default ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--max-batch", defaultValue = "64", description = "Largest batch size; sizes are 1, 2, 4, … (default ${DEFAULT-VALUE}).")
    int maxBatch;

    @Option(names = "--samples", defaultValue = "20", description = "Measured batches per size (default ${DEFAULT-VALUE}).")
    int samples;

    @Option(names = "--warmup", defaultValue = "5", description = "Unrecorded batches per size first (default ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--input-length", defaultValue = "784", description = "Floats per input vector (default ${DEFAULT-VALUE}).")
    int inputLength;

    @Option(names = "--timeout-ms", defaultValue = "10000", description = "Per-batch deadline (default ${DEFAULT-VALUE}).")
    long timeoutMs;

    @Option(names = "--out", required = true, description = "The profile file to write (CSV batch_size,service_ns).")
    Path out;

    @Override
    public Integer call() throws Exception {
        if ((target == null) == !startEmulated) {
            throw new CommandLine.ParameterException(spec.commandLine(), "give exactly one of --target and --start-emulated");
        }
        if (maxBatch < 1 || samples < 1 || warmup < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "need --max-batch >= 1, --samples >= 1, --warmup >= 0");
        }
        ModelContainer<float[], String> emulated = startEmulated
                ? ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                        new EmulatedPredictor<float[]>(betaMs, alphaMs, 10)).name(model).host("127.0.0.1").port(0)
                        .build().start()
                : null;
        String address = emulated != null ? "127.0.0.1:" + emulated.port() : target;
        List<String> lines = new ArrayList<>();
        boolean roundTripUsed = false;
        try (ContainerClient client = ContainerClient.connect(address)) {
            Random random = new Random(1);
            Duration timeout = Duration.ofMillis(timeoutMs);
            for (int b = 1; b <= maxBatch; b *= 2) {
                List<float[]> batch = new ArrayList<>(b);
                for (int i = 0; i < b; i++) {
                    float[] v = new float[inputLength];
                    for (int j = 0; j < inputLength; j++) {
                        v[j] = random.nextFloat();
                    }
                    batch.add(v);
                }
                for (int i = 0; i < warmup + samples; i++) {
                    long sent = System.nanoTime();
                    InferResult<String> r = client.infer(model, "", TensorType.FLOATS, batch, TensorType.STRINGS,
                            timeout).get(timeoutMs, TimeUnit.MILLISECONDS);
                    long roundTrip = System.nanoTime() - sent;
                    if (i >= warmup) {
                        roundTripUsed |= r.serviceTimeNanos() <= 0;
                        lines.add(b + "," + (r.serviceTimeNanos() > 0 ? r.serviceTimeNanos() : roundTrip));
                    }
                }
                System.err.printf("profile: batch %d done%n", b);
            }
        } finally {
            if (emulated != null) {
                emulated.close();
            }
        }
        Path dir = out.toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        try (Writer w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            w.write("# service time per batch size of model '" + model + "' at " + address
                    + (startEmulated ? " (emulated, beta " + betaMs + " ms, alpha " + alphaMs + " ms)" : "") + "\n");
            w.write("# " + Instant.now().truncatedTo(ChronoUnit.SECONDS) + ", " + samples + " samples per size after "
                    + warmup + " unrecorded, one batch at a time; "
                    + (roundTripUsed ? "client round trips where the container reported no service time"
                            : "the container's servegate_service_time_ns") + "\n");
            w.write("batch_size,service_ns\n");
            for (String line : lines) {
                w.write(line + "\n");
            }
        }
        System.err.printf("profile: %d samples written to %s%n", lines.size(), out);
        return 0;
    }
}

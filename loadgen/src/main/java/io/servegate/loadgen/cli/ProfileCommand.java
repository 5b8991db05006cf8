package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.servegate.containers.emulated.EmulatedPredictor;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.ContainerProfiler;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import io.servegate.workload.admin.GatewayAdminClient;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Records a model container's service time per batch size, for the simulator's measured latency
 * ({@code bin/sim --profile FILE}) and, one file per hardware kind, the pipeline planner's model
 * profiles ({@code bin/sim plan}). The measuring is {@link ContainerProfiler}'s, which the
 * gateway's {@code profile_model} uses too: batches of 1, 2, 4, … up to a limit, one at a time
 * (so none waits behind another), several times each after a warm-up.
 *
 * <p>Direct ({@code --target} or {@code --start-emulated}): writes the container's own reported
 * times ({@code servegate_service_time_ns}; the client's round trip where it reports none) in
 * the simulator's profile format: a header {@code batch_size,service_ns} and one sample per line,
 * after {@code #} comments saying what was measured and when. Through the gateway
 * ({@code --gateway}): asks it to profile one replica of a deployed model version, prints the
 * table it stored in its registry and, with {@code --out-file}, writes the answer as JSON.
 */
@Command(name = "profile", mixinStandardHelpOptions = true,
        description = "Records a container's service time per batch size to a file the simulator reads, "
                + "or has the gateway profile a model's replica and store the result in its registry.")
public final class ProfileCommand implements Callable<Integer> {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    CommandSpec spec;

    @Mixin
    TargetOption target;

    @Option(names = "--start-emulated", description = "Start the emulated container (beta + alpha*b) in this JVM and profile it.")
    boolean startEmulated;

    @Option(names = "--gateway", description = "The gateway's admin URL, e.g. http://127.0.0.1:1338: it profiles a replica of --model (POST /admin/profile_model).")
    String gateway;

    @Option(names = "--token", defaultValue = "${env:SERVEGATE_ADMIN_TOKEN}", description = "The gateway's admin bearer token (default: $SERVEGATE_ADMIN_TOKEN).")
    String token;

    @Option(names = "--model-version", description = "With --gateway: the version to profile (default: the current one).")
    String modelVersion;

    @Option(names = "--hardware", description = "With --gateway: the replica's hardware kind, which must be the version's (default: the version's).")
    String hardware;

    @Mixin
    BatchCostOption cost = new BatchCostOption(5, 0.5);

    @Option(names = "--model", defaultValue = "emulated", description = "Model name (default ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--max-batch", defaultValue = "64", description = "Largest batch size; sizes are 1, 2, 4, … (default ${DEFAULT-VALUE}).")
    int maxBatch;

    @Option(names = "--samples", defaultValue = "20", description = "Measured batches per size (default ${DEFAULT-VALUE}).")
    int samples;

    @Option(names = "--warmup-batches", defaultValue = "5",
            description = "Unrecorded batches per size first (default ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--input-length", defaultValue = "784", description = "Floats per input vector (default ${DEFAULT-VALUE}).")
    int inputLength;

    @Mixin
    TimeoutOption requestTimeout = new TimeoutOption(10000);

    @Mixin
    OutFileOption outFile;

    @Override
    public Integer call() throws Exception {
        int modes = (target.address() != null ? 1 : 0) + (startEmulated ? 1 : 0) + (gateway != null ? 1 : 0);
        if (modes != 1) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "give exactly one of --target, --start-emulated and --gateway");
        }
        if (maxBatch < 1 || samples < 1 || warmup < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "need --max-batch >= 1, --samples >= 1, --warmup-batches >= 0");
        }
        if (gateway != null) {
            return throughGateway();
        }
        if (outFile.file() == null) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--out-file is required with --target or --start-emulated");
        }
        ModelContainer<float[], String> emulated = startEmulated
                ? ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                        new EmulatedPredictor<float[]>(cost.betaMs(), cost.alphaMs(), 10)).name(model).host("127.0.0.1").port(0)
                        .build().start()
                : null;
        String address = emulated != null ? "127.0.0.1:" + emulated.port() : target.address();
        ContainerProfiler.Profile profile;
        ContainerProfiler profiler = new ContainerProfiler(maxBatch, samples, warmup, requestTimeout.duration());
        try (ContainerClient client = ContainerClient.connect(address)) {
            Random random = new Random(1);
            profile = profiler.profile(client, model, "", TensorType.FLOATS, b -> randomBatch(random, b),
                    b -> System.err.printf("profile: batch %d done%n", b)).get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } finally {
            if (emulated != null) {
                emulated.close();
            }
        }
        Path dir = outFile.file().toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        int lines = 0;
        try (Writer w = Files.newBufferedWriter(outFile.file(), StandardCharsets.UTF_8)) {
            w.write("# service time per batch size of model '" + model + "' at " + address
                    + (startEmulated ? " (emulated, beta " + cost.betaMs() + " ms, alpha " + cost.alphaMs() + " ms)" : "") + "\n");
            w.write("# " + Instant.now().truncatedTo(ChronoUnit.SECONDS) + ", " + samples + " samples per size after "
                    + warmup + " unrecorded, one batch at a time; "
                    + (profile.roundTrip() ? "client round trips where the container reported no service time"
                            : "the container's servegate_service_time_ns") + "\n");
            w.write("batch_size,service_ns\n");
            for (Map.Entry<Integer, long[]> e : profile.samplesNanos().entrySet()) {
                for (long ns : e.getValue()) {
                    w.write(e.getKey() + "," + ns + "\n");
                    lines++;
                }
            }
        }
        System.err.printf("profile: %d samples written to %s%n", lines, outFile.file());
        return 0;
    }

    private List<float[]> randomBatch(Random random, int size) {
        List<float[]> batch = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            float[] v = new float[inputLength];
            for (int j = 0; j < inputLength; j++) {
                v[j] = random.nextFloat();
            }
            batch.add(v);
        }
        return batch;
    }

    /** {@code POST /admin/profile_model}, then the stored profile as a table. */
    private int throughGateway() throws IOException, InterruptedException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model_name", model);
        if (modelVersion != null) {
            body.put("model_version", modelVersion);
        }
        if (hardware != null) {
            body.put("hardware", hardware);
        }
        body.put("max_batch", maxBatch);
        body.put("samples", samples);
        body.put("warmup", warmup);
        body.put("input_length", inputLength);
        body.put("timeout_ms", requestTimeout.ms);
        // the gateway answers once every batch size is measured
        int sizes = 32 - Integer.numberOfLeadingZeros(maxBatch);
        long budgetMs = 60_000 + (long) sizes * (warmup + samples) * requestTimeout.ms;
        JsonNode profile = new GatewayAdminClient(gateway, token, Duration.ofMillis(budgetMs)).post("profile_model", body);
        System.out.print(table(profile));
        if (outFile.file() != null) {
            Path dir = outFile.file().toAbsolutePath().getParent();
            if (dir != null) {
                Files.createDirectories(dir);
            }
            Files.writeString(outFile.file(), JSON.writerWithDefaultPrettyPrinter().writeValueAsString(profile) + "\n");
        }
        return 0;
    }

    /** A stored profile (get_profiles' form) as a table: one line per batch size. */
    static String table(JsonNode p) {
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
                "model %s:%s on %s (replica %s at %s), %s, %d samples per size%s%n",
                p.path("model_name").asText(), p.path("model_version").asText(), p.path("hardware").asText(),
                p.path("replica_id").asText(), p.path("address").asText(), p.path("measured_at").asText(),
                p.path("samples").asInt(), p.path("round_trip").asBoolean() ? " (client round trips)" : ""));
        b.append(String.format(Locale.ROOT, "  %10s %10s %10s%n", "batch size", "mean ms", "p99 ms"));
        for (JsonNode row : p.path("batches")) {
            b.append(String.format(Locale.ROOT, "  %10d %10.3f %10.3f%n", row.path("batch_size").asInt(),
                    row.path("mean_ms").asDouble(), row.path("p99_ms").asDouble()));
        }
        return b.toString();
    }
}

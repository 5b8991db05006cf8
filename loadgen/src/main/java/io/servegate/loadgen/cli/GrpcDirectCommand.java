package io.servegate.loadgen.cli;

import io.servegate.containers.noop.NoopContainer;
import io.servegate.loadgen.load.ClosedLoop;
import io.servegate.loadgen.load.GrpcDirectWorkload;
import io.servegate.loadgen.load.LoadResult;
import io.servegate.loadgen.report.BenchmarkReport;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Closed-loop load straight at one model container over gRPC (no gateway), once per batch size:
 * the floor any serving path through the gateway is compared with.
 */
@Command(name = "grpc-direct", mixinStandardHelpOptions = true,
        description = "Closed-loop OIP gRPC load straight at a model container, per batch size.")
public final class GrpcDirectCommand implements Callable<Integer> {

    static final String BENCHMARK = "grpc-direct";

    @Spec
    CommandSpec spec;

    @Mixin
    TargetOption target;

    @Option(names = "--start-noop",
            description = "Start the noop container in this JVM on a free loopback port and load it.")
    boolean startNoop;

    @Option(names = "--model", defaultValue = "noop", description = "Model name (default ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--batch-sizes", split = ",", defaultValue = "1,8,32",
            description = "Inputs per request, one run each (default ${DEFAULT-VALUE}).")
    List<Integer> batchSizes;

    @Option(names = "--clients", defaultValue = "4", description = "Concurrent closed-loop clients (default ${DEFAULT-VALUE}).")
    int clients;

    @Mixin
    DurationOption duration = new DurationOption(10);

    @Mixin
    WarmupOption warmup = new WarmupOption(3);

    @Option(names = "--jvm-warmup-s", defaultValue = "10",
            description = "Unmeasured seconds, once, spread over all batch sizes before the first measurement, so "
                    + "that the JIT has compiled the client and server paths (default ${DEFAULT-VALUE}).")
    double jvmWarmupS;

    @Option(names = "--input-length", defaultValue = "784",
            description = "Floats per input vector (default ${DEFAULT-VALUE}).")
    int inputLength;

    @Mixin
    TimeoutOption requestTimeout = new TimeoutOption(10000);

    @Mixin
    ResultsOption outDir;

    @Override
    public Integer call() throws Exception {
        validate();
        Instant startedAt = Instant.now();
        ModelContainer<float[], String> noop = startNoop
                ? NoopContainer.builder(TensorType.FLOATS).name(model).host("127.0.0.1").port(0).build().start()
                : null;
        String address = noop != null ? "127.0.0.1:" + noop.port() : target.address();
        List<LoadResult> results = new ArrayList<>();
        try (ContainerClient client = ContainerClient.connect(address)) {
            Duration timeout = requestTimeout.duration();
            if (jvmWarmupS > 0) {
                // Without this the first batch size runs on a JVM still compiling (measured: batch 1
                // at under half the request rate of a second batch-1 run right after it).
                spec.commandLine().getErr().printf("%s: JVM warm-up, %.1f s over all batch sizes...%n", BENCHMARK,
                        jvmWarmupS);
                ClosedLoop jit = new ClosedLoop(clients, Duration.ZERO, seconds(jvmWarmupS / batchSizes.size()));
                for (int batch : batchSizes) {
                    jit.run(new GrpcDirectWorkload(client, model, batch, inputLength, timeout, batch));
                }
            }
            ClosedLoop loop = new ClosedLoop(clients, warmup.duration(), duration.duration());
            for (int batch : batchSizes) {
                spec.commandLine().getErr().printf("%s: batch %d, %d clients, %.1f s warm-up + %.1f s...%n",
                        BENCHMARK, batch, clients, warmup.seconds, duration.seconds);
                results.add(loop.run(new GrpcDirectWorkload(client, model, batch, inputLength, timeout, batch)));
            }
        } finally {
            if (noop != null) {
                noop.close();
            }
        }
        BenchmarkReport report = new BenchmarkReport(BENCHMARK, startedAt.toString(), settings(address), 
                BenchmarkReport.environmentOfThisJvm(), results);
        Path file = report.writeJson(outDir.create(BENCHMARK));
        spec.commandLine().getOut().print(report.table());
        spec.commandLine().getOut().println("wrote " + file);
        for (LoadResult r : results) {
            if (r.firstError() != null) {
                spec.commandLine().getErr().printf("batch %d: %d errors, first: %s%n", r.batchSize(), r.errors(),
                        r.firstError());
            }
        }
        // A run with nothing to show is a failed run, so scripts notice.
        return results.stream().allMatch(r -> r.requests() > 0) ? 0 : 1;
    }

    private void validate() {
        if (startNoop == (target.address() != null)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "give exactly one of --target and --start-noop");
        }
        if (batchSizes.isEmpty() || batchSizes.stream().anyMatch(b -> b < 1)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "batch sizes must be positive: " + batchSizes);
        }
        if (clients < 1 || inputLength < 1 || requestTimeout.ms < 1 || !(duration.seconds > 0) || !(warmup.seconds >= 0)
                || !(jvmWarmupS >= 0)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--clients, --input-length, --timeout-ms "
                    + "and --duration-s must be positive, --warmup-s and --jvm-warmup-s ≥ 0");
        }
    }

    private Map<String, Object> settings(String address) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("target", address);
        s.put("startNoop", startNoop);
        s.put("model", model);
        s.put("batchSizes", batchSizes);
        s.put("clients", clients);
        s.put("jvmWarmupS", jvmWarmupS);
        s.put("warmupS", warmup.seconds);
        s.put("durationS", duration.seconds);
        s.put("inputLength", inputLength);
        s.put("timeoutMs", requestTimeout.ms);
        s.put("loop", "closed");
        return s;
    }

    private static Duration seconds(double s) {
        return Duration.ofNanos(Math.round(s * 1e9));
    }
}

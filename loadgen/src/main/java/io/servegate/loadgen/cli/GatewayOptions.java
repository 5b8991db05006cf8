package io.servegate.loadgen.cli;

import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.GatewayProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/** How the benchmarks that load the gateway start it as a child process (a picocli mixin). */
public final class GatewayOptions {

    @Option(names = "--gateway-jar", defaultValue = "gateway/target/gateway-0.1.0-SNAPSHOT.jar",
            description = "The gateway's executable jar (default ${DEFAULT-VALUE}).")
    Path jar;

    @Option(names = "--gateway-jvm-arg",
            description = "JVM option of the gateway process, repeatable; give as --gateway-jvm-arg=-X... "
                    + "(default ${DEFAULT-VALUE}).")
    List<String> jvmArgs;

    @Option(names = "--gateway-arg",
            description = "Extra gateway setting, repeatable, e.g. --gateway-arg=--servegate.batching.batch-wait=1ms.")
    List<String> gatewayArgs = new ArrayList<>();

    @Option(names = "--gateway-start-timeout-s", defaultValue = "120",
            description = "Seconds to wait for the gateway's /admin/ping (default ${DEFAULT-VALUE}).")
    long startTimeoutS;

    public GatewayOptions() {
        this("-Xmx1g");
    }

    /** With this JVM option of the gateway by default. */
    GatewayOptions(String jvmArg) {
        jvmArgs = new ArrayList<>(List.of(jvmArg));
    }

    /** How long to wait for a started gateway's admin API. */
    Duration startTimeout() {
        return Duration.ofSeconds(startTimeoutS);
    }

    /**
     * Starts the gateway with its output in {@code dir/gateway-<benchmark>.log} and waits until
     * its admin API answers and it reports ready: its warm-up exercises the query path for seconds
     * and takes the cores a benchmark's load would find, so no benchmark loads it before.
     */
    GatewayProcess start(Path dir, String benchmark) throws IOException, InterruptedException {
        return start(dir, benchmark, List.of());
    }

    /** As {@link #start(Path, String)}, with settings of the scenario's before the user's {@code --gateway-arg}s. */
    GatewayProcess start(Path dir, String benchmark, List<String> scenarioArgs)
            throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(scenarioArgs);
        args.addAll(gatewayArgs);
        GatewayProcess gateway = GatewayProcess.start(jar, jvmArgs, args,
                dir.resolve("gateway-" + benchmark + ".log"));
        try {
            gateway.awaitLoadable(startTimeout());
            return gateway;
        } catch (IOException | InterruptedException | RuntimeException e) {
            gateway.close();
            throw e;
        }
    }

    /** What the report says about the gateway process, after the run. */
    static Map<String, Object> describe(GatewayProcess gateway, Path metricsFile, int maxProblems) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("command", gateway.command());
        m.put("port", gateway.port());
        m.put("adminPort", gateway.adminPort());
        m.put("log", gateway.log().toString());
        m.put("metrics", metricsFile == null ? null : metricsFile.toString());
        m.put("aliveAtEnd", gateway.isAlive());
        m.put("logProblemLines", gateway.problemCount());
        m.put("firstLogProblems", gateway.problems(maxProblems));
        return m;
    }

    /**
     * Saves the gateway's Prometheus scrape ({@code GET /metrics} on the query port) as
     * {@code dir/gateway-<benchmark>-metrics.txt}, for its own view of latency and defaults;
     * null if the scrape failed.
     */
    static Path saveMetrics(GatewayProcess gateway, Path dir, String benchmark) throws InterruptedException {
        String text = GatewayMetrics.scrapeText(gateway);
        if (text == null) {
            return null;
        }
        Path file = dir.resolve("gateway-" + benchmark + "-metrics.txt");
        try {
            Files.writeString(file, text);
            return file;
        } catch (IOException e) {
            return null;
        }
    }
}

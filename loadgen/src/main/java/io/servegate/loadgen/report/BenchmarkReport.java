package io.servegate.loadgen.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.loadgen.load.LatencySummary;
import io.servegate.loadgen.load.LoadResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The results of one benchmark command: what was run, on what, and one {@link LoadResult} per
 * setting. Written as JSON for later comparison, and printed as a table for people.
 *
 * @param benchmark the subcommand, e.g. {@code grpc-direct}
 * @param startedAt ISO-8601 instant
 * @param settings the command's options, as given
 * @param environment the machine and JVM the load generator ran on
 * @param results one per setting, in the order run
 */
public record BenchmarkReport(String benchmark, String startedAt, Map<String, Object> settings,
        Map<String, Object> environment, List<LoadResult> results) {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /** The machine and JVM this process runs on. */
    public static Map<String, Object> environmentOfThisJvm() {
        Map<String, Object> env = new LinkedHashMap<>();
        env.put("availableProcessors", Runtime.getRuntime().availableProcessors());
        env.put("maxHeapBytes", Runtime.getRuntime().maxMemory());
        env.put("javaVersion", System.getProperty("java.version"));
        env.put("javaVm", System.getProperty("java.vm.name"));
        env.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        return env;
    }

    /** Writes the report as {@code dir/<benchmark>.json}, creating dir, and returns the file. */
    public Path writeJson(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve(benchmark + ".json");
        JSON.writeValue(file.toFile(), this);
        return file;
    }

    /** Reads a report written by {@link #writeJson}. */
    public static BenchmarkReport readJson(Path file) throws IOException {
        return JSON.readValue(file.toFile(), BenchmarkReport.class);
    }

    /** The results as a fixed-width table. */
    public String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%6s %8s %10s %7s %11s %12s %9s %9s %9s %9s%n", "batch", "clients",
                "requests", "errors", "requests/s", "inputs/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms"));
        for (LoadResult r : results) {
            LatencySummary l = r.latency();
            sb.append(String.format(Locale.ROOT, "%6d %8d %10d %7d %11.1f %12.1f %9s %9s %9s %9s%n", r.batchSize(),
                    r.clients(), r.requests(), r.errors(), r.requestsPerSec(), r.inputsPerSec(),
                    ms(l == null ? null : l.p50Ms()), ms(l == null ? null : l.p99Ms()),
                    ms(l == null ? null : l.p999Ms()), ms(l == null ? null : l.maxMs())));
        }
        return sb.toString();
    }

    private static String ms(Double value) {
        return value == null ? "-" : String.format(Locale.ROOT, "%.3f", value);
    }
}

package io.servegate.gateway.bench;

import static io.servegate.gateway.bench.FeedbackThroughputBenchmark.APP;
import static io.servegate.gateway.bench.FeedbackThroughputBenchmark.MODELS;
import static io.servegate.gateway.bench.FeedbackThroughputBenchmark.SLO_MICROS;

import io.servegate.gateway.bench.FeedbackPhases.LoadClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What the feedback-throughput benchmark reports: {@code feedback-throughput.json} (the setup,
 * every phase, the Redis floors and the ratios between them) and the table it prints.
 */
final class FeedbackReport {

    private FeedbackReport() {
    }

    /** The run's setup, as the report states it. */
    static Map<String, Object> setup(String redisUri, int clients, int warmupS, int durationS, int warmImages,
            int users, LoadClient client, String loadAtStart) {
        Map<String, Object> setup = new LinkedHashMap<>();
        setup.put("app", APP + ": exp4 over " + MODELS + ", latency_slo_micros " + SLO_MICROS);
        setup.put("models", "four Fashion-MNIST ONNX models as in-process containers (OIP gRPC on loopback)");
        setup.put("selection_store", "redis (a real redis-server, " + redisUri + ")");
        setup.put("prediction_cache", "gateway default (enabled, 32MB)");
        setup.put("clients", clients);
        setup.put("warmup_s", warmupS);
        setup.put("duration_s", durationS);
        setup.put("warm_images", warmImages);
        setup.put("users", users);
        setup.put("client", client == LoadClient.WRK
                ? "cache-hit phases: wrk (a separate process, " + WrkPhase.THREADS + " threads, " + clients
                        + " connections); cache misses: a Reactor Netty client in the gateway's JVM"
                : "a Reactor Netty client in the gateway's JVM");
        setup.put("machine", Runtime.getRuntime().availableProcessors() + " CPUs, shared by the load generator, the "
                + "gateway and the model containers (one JVM) and redis-server");
        setup.put("loadavg_at_start", loadAtStart);
        setup.put("loadavg_at_end", loadavg());
        return setup;
    }

    /** Writes {@code out/feedback-throughput.json} and prints the floors and the table. */
    static void write(Path out, Map<String, Object> setup, List<Map<String, Object>> results,
            Map<String, Object> floors) throws IOException {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("benchmark", "feedback-throughput");
        json.put("description", "closed-loop POST /" + APP + "/update {input, label} through the gateway; "
                + "feedback joins the remembered prediction of the input in its context, else the linked models' "
                + "predictions from the prediction cache (querying a model on a miss); selection states in Redis "
                + "(one observe script per update)");
        json.put("clipper_reference", "Clipper NSDI'17 4.2: about 6K feedback observations/s without, 11K with "
                + "prediction cache hits");
        json.put("setup", setup);
        json.put("phases", results);
        json.put("redis_floor", floors);
        Map<String, Object> ratios = ratios(results, floors);
        json.put("ratios", ratios);
        BenchOutput.write(out.resolve("feedback-throughput.json"), BenchOutput.json(json));
        System.out.println();
        floors.forEach((phase, floor) -> System.out.printf(Locale.ROOT, "redis floor for %s: %s%n", phase, floor));
        System.out.println(table(results, ratios));
        System.out.println("wrote " + out.resolve("feedback-throughput.json"));
    }

    private static Map<String, Object> ratios(List<Map<String, Object>> results, Map<String, Object> floors) {
        Map<String, Object> ratios = new LinkedHashMap<>();
        floors.forEach((phase, floor) -> {
            @SuppressWarnings("unchecked")
            double rps = (Double) ((Map<String, Object>) floor).get("requests_per_s");
            if (rps > 0) {
                ratios.put(phase.replace('-', '_') + "_over_redis_floor", rate(results, phase) / rps);
            }
        });
        double hits = rate(results, "cache-hits");
        double misses = rate(results, "cache-misses");
        double perUser = rate(results, "cache-hits-per-user");
        if (hits > 0 && misses > 0) {
            ratios.put("cache_hits_over_misses", hits / misses);
        }
        if (hits > 0 && perUser > 0) {
            ratios.put("per_user_over_app_wide", perUser / hits);
        }
        double control = rate(results, "predict-hits");
        if (control > 0) {
            // the control's answers per second: the ceiling of the same bodies through the same gateway
            if (hits > 0) {
                ratios.put("cache_hits_over_predict_control", hits / control);
            }
            if (perUser > 0) {
                ratios.put("cache_hits_per_user_over_predict_control", perUser / control);
            }
        }
        return ratios;
    }

    /** A phase's obs/s; of a phase run more than once, the last (warmest) run's. */
    static double rate(List<Map<String, Object>> results, String phase) {
        return results.stream().filter(r -> phase.equals(r.get("phase"))).mapToDouble(r -> (Double) r.get("obs_per_s"))
                .reduce((first, last) -> last).orElse(0);
    }

    private static String table(List<Map<String, Object>> results, Map<String, Object> ratios) {
        StringBuilder sb = new StringBuilder("Feedback throughput (POST /" + APP + "/update, exp4 over 4 ONNX models,"
                + " states in Redis)\n");
        sb.append(String.format(Locale.ROOT, "  %-22s %-6s %8s %10s %9s %9s %9s %8s %15s%n", "phase", "client",
                "clients", "obs/s", "p50 ms", "p99 ms", "max ms", "errors", "cache hit/miss"));
        for (Map<String, Object> r : results) {
            @SuppressWarnings("unchecked")
            Map<String, Object> lat = (Map<String, Object>) r.get("latency_ms");
            @SuppressWarnings("unchecked")
            Map<String, Object> cache = (Map<String, Object>) r.get("cache_lookups");
            sb.append(String.format(Locale.ROOT, "  %-22s %-6s %8d %10.0f %9.2f %9.2f %9.2f %8d %15s%n",
                    r.get("phase"), r.get("client"), (Integer) r.get("clients"), (Double) r.get("obs_per_s"),
                    (Double) lat.get("p50"), (Double) lat.get("p99"), (Double) lat.get("max"), (Long) r.get("errors"),
                    cache.get("hits") + "/" + cache.get("misses")));
        }
        ratios.forEach((k, v) -> sb.append(String.format(Locale.ROOT, "  %s: %.2f%n", k, (Double) v)));
        return sb.toString();
    }

    /** One phase's result as a line. */
    static String line(Map<String, Object> phase) {
        @SuppressWarnings("unchecked")
        Map<String, Object> lat = (Map<String, Object>) phase.get("latency_ms");
        @SuppressWarnings("unchecked")
        Map<String, Object> cache = (Map<String, Object>) phase.get("cache_lookups");
        @SuppressWarnings("unchecked")
        List<String> samples = (List<String>) phase.get("error_samples");
        return String.format(Locale.ROOT, "%s: %.0f obs/s, p50 %.2f ms, p99 %.2f ms, %d errors (%d in warm-up)%s;"
                + " cache lookups %d hits / %d misses%s", phase.get("phase"), (Double) phase.get("obs_per_s"),
                (Double) lat.get("p50"), (Double) lat.get("p99"), (Long) phase.get("errors"),
                (Long) phase.get("warmup_errors"), samples.isEmpty() ? "" : " e.g. " + samples.get(0), cache.get("hits"),
                cache.get("misses"), phase.containsKey("gateway_feedback_check")
                        ? "; " + phase.get("gateway_feedback_check") : "");
    }

    /** The machine's load averages (1, 5, 15 min) from /proc/loadavg, or "unknown". */
    static String loadavg() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (Exception e) {
            return "unknown";
        }
    }
}

package io.servegate.gateway.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A phase of the feedback-throughput benchmark loaded by {@code wrk}, a separate process: it
 * sends the {@code period} bodies in turn ({@link #SCRIPT}), a warm-up run, then the measured one
 * with its latency distribution. The gateway's own feedback counter is read around both, as a
 * check that every request wrk counted was an observation.
 */
final class WrkPhase {

    static final Path SCRIPT = Path.of("../bench/feedback-wrk.lua");
    static final int THREADS = 2;

    /** One wrk run's totals: requests, errors (non-2xx answers and socket errors), seconds, latency in ms. */
    private record Run(long requests, long errors, double seconds, Map<String, Object> latencyMs) {
    }

    private final FeedbackGatewayClient gateway;
    private final int clients;

    WrkPhase(FeedbackGatewayClient gateway, int clients) {
        this.gateway = gateway;
        this.clients = clients;
    }

    Map<String, Object> run(FeedbackEndpoint endpoint, String name, String description, LongFunction<byte[]> bodies,
            int period, int warmupS, int durationS) throws Exception {
        Path file = Files.createTempFile("feedback-bodies", ".jsonl");
        try {
            try (var w = Files.newOutputStream(file)) {
                for (int i = 0; i < period; i++) {
                    w.write(bodies.apply(i));
                    w.write('\n');
                }
            }
            long[] cacheBefore = gateway.cacheCounters();
            long feedbackBefore = gateway.feedbackCounter();
            Run warm = wrk(endpoint, file, warmupS, false);
            Run run = wrk(endpoint, file, durationS, true);
            long feedback = gateway.feedbackCounter() - feedbackBefore;
            long[] cacheAfter = gateway.cacheCounters();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("phase", name);
            m.put("description", description);
            m.put("client", "wrk");
            m.put("clients", clients);
            m.put("warmup_s", warmupS);
            m.put("duration_s", durationS);
            long ok = run.requests() - run.errors();
            m.put("observations", ok);
            m.put("obs_per_s", ok / run.seconds());
            m.put("latency_ms", run.latencyMs());
            m.put("errors", run.errors());
            m.put("warmup_errors", warm.errors());
            m.put("error_samples", List.of());
            m.put("requests_sent_incl_warmup", warm.requests() + run.requests());
            m.put("gateway_feedback_counted", feedback);
            m.put("gateway_feedback_check", "the gateway's servegate_selection_feedback_total grew by " + feedback
                    + " over both wrk runs, which completed " + (warm.requests() + run.requests())
                    + " requests (up to " + 2 * clients + " more may have been in flight when wrk stopped)");
            Map<String, Object> cache = new LinkedHashMap<>();
            cache.put("hits", cacheAfter[0] - cacheBefore[0]);
            cache.put("misses", cacheAfter[1] - cacheBefore[1]);
            cache.put("note", "prediction cache lookups during the phase (warm-up included), 4 per update");
            m.put("cache_lookups", cache);
            return m;
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private Run wrk(FeedbackEndpoint endpoint, Path bodies, int seconds, boolean latency) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("wrk", "-t" + Math.min(THREADS, clients), "-c" + clients,
                "-d" + seconds + "s", "-s", SCRIPT.toString()));
        if (latency) {
            cmd.add("--latency");
        }
        cmd.addAll(List.of("http://127.0.0.1:" + gateway.queryPort() + endpoint.path, "--", bodies.toString(),
                Integer.toString(Math.min(THREADS, clients))));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(seconds + 60L, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("wrk failed: " + FeedbackGatewayClient.abbreviate(out));
        }
        Matcher total = Pattern.compile("(\\d+) requests in ([\\d.]+)(m?s)").matcher(out);
        if (!total.find()) {
            throw new IllegalStateException("no totals in wrk's output: " + FeedbackGatewayClient.abbreviate(out));
        }
        long requests = Long.parseLong(total.group(1));
        double runSeconds = Double.parseDouble(total.group(2)) / ("ms".equals(total.group(3)) ? 1000 : 1);
        long errors = 0;
        Matcher non2xx = Pattern.compile("Non-2xx or 3xx responses: (\\d+)").matcher(out);
        if (non2xx.find()) {
            errors += Long.parseLong(non2xx.group(1));
        }
        Matcher socket = Pattern.compile(
                "Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)").matcher(out);
        if (socket.find()) {
            for (int g = 1; g <= 4; g++) {
                errors += Long.parseLong(socket.group(g));
            }
        }
        Map<String, Object> lat = new LinkedHashMap<>();
        for (String pct : List.of("50", "90", "99")) {
            Matcher m = Pattern.compile("\\s" + pct + "%\\s+([\\d.]+)(us|ms|s)\\b").matcher(out);
            lat.put("p" + pct, m.find() ? millis(m.group(1), m.group(2)) : Double.NaN);
        }
        Matcher stats = Pattern.compile(
                "Latency\\s+([\\d.]+)(us|ms|s)\\s+[\\d.]+(?:us|ms|s)\\s+([\\d.]+)(us|ms|s)").matcher(out);
        boolean found = stats.find();
        lat.put("max", found ? millis(stats.group(3), stats.group(4)) : Double.NaN);
        lat.put("mean", found ? millis(stats.group(1), stats.group(2)) : Double.NaN);
        return new Run(requests, errors, runSeconds, lat);
    }

    private static double millis(String value, String unit) {
        double v = Double.parseDouble(value);
        return switch (unit) {
            case "us" -> v / 1000;
            case "s" -> v * 1000;
            default -> v;
        };
    }
}

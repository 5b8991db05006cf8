package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.harness.PrometheusText;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.load.Workload;
import io.servegate.loadgen.report.RunConditions;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The bulk phase of {@code loadgen fleet}: under the fleet's round-robin load, requests of many rows
 * ({@code input_batch}) to an app of their own with a longer SLO, linked to the same model
 * version, each sent to a gateway that does not own the version, in turn, so that every row is
 * forwarded. It reports each request's latency and rows predicted against that SLO, the load's own
 * share in SLO meanwhile, and from the senders' scrapes how many queries their forward calls carried
 * ({@code servegate_fleet_forward_queries}: calls, queries, the most in one call). Performance is
 * reported, never asserted.
 */
final class FleetBulkPhase {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String QUERIES_PER_CALL = "servegate_fleet_forward_queries";

    private final double rate;
    private final long sloNanos;
    private final int rows;
    private final double bulkSloMs;
    private final int seconds;
    private final double everyS;
    private final long seed;
    private final Duration timeout;
    private final PrintWriter err;

    /**
     * @param rows      rows per bulk request
     * @param bulkSloMs the bulk app's SLO
     * @param seconds   how long the phase's load runs
     * @param everyS    seconds between bulk requests
     */
    FleetBulkPhase(double rate, double sloMs, int rows, double bulkSloMs, int seconds, double everyS, long seed,
            Duration timeout, PrintWriter err) {
        if (rows < 1 || seconds < 1 || !(everyS > 0) || !(bulkSloMs > 0)) {
            throw new IllegalArgumentException("the bulk phase needs ≥ 1 row, ≥ 1 s, a positive period and SLO, got "
                    + rows + ", " + seconds + ", " + everyS + " and " + bulkSloMs);
        }
        this.rate = rate;
        this.sloNanos = Math.round(sloMs * 1e6);
        this.rows = rows;
        this.bulkSloMs = bulkSloMs;
        this.seconds = seconds;
        this.everyS = everyS;
        this.seed = seed;
        this.timeout = timeout;
        this.err = err;
    }

    /**
     * Runs the phase: {@code load} (the fleet's round robin) at the phase's rate, and the bulk
     * requests to {@code app} at the members of {@code fleet} other than {@code owner}.
     */
    Map<String, Object> run(List<GatewayProcess> fleet, int owner, Workload load, String app, int inputLength)
            throws Exception {
        List<GatewayProcess> senders = new ArrayList<>();
        for (int i = 0; i < fleet.size(); i++) {
            if (i != owner) {
                senders.add(fleet.get(i));
            }
        }
        if (senders.isEmpty()) {
            throw new IllegalStateException("the bulk phase needs a gateway that does not own the version");
        }
        List<Map<String, Double>> before = new ArrayList<>();
        for (GatewayProcess g : senders) {
            before.add(queriesPerCall(g));
        }
        err.printf("%s: bulk: %.0f/s round robin for %d s, and every %.1f s a request of %d rows (SLO %.0f ms) "
                + "to a gateway that does not own the version...%n", FleetCommand.SCENARIO, rate, seconds, everyS,
                rows, bulkSloMs);
        RunConditions atStart = RunConditions.now();
        Bulk bulk = new Bulk(senders, app, new RandomInputs(inputLength));
        bulk.thread.start();
        AnswerTally tally = new AnswerTally(sloNanos);
        OpenLoopResult r;
        try {
            r = new OpenLoop(rate, Duration.ZERO, Duration.ofSeconds(seconds), timeout, seed + 2000).run(load, tally);
        } finally {
            bulk.stop();
        }
        List<Map<String, Object>> requests = bulk.await();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("rows_per_request", rows);
        out.put("bulk_slo_ms", bulkSloMs);
        out.put("requests", requests);
        long inSlo = requests.stream().filter(q -> Boolean.TRUE.equals(q.get("in_slo"))).count();
        double maxMs = requests.stream().mapToDouble(q -> (Double) q.getOrDefault("latency_ms", Double.NaN)).max()
                .orElse(Double.NaN);
        out.put("requests_in_slo", inSlo);
        out.put("latency_max_ms", maxMs);
        AnswerTally.Counts counts = tally.counts();
        out.put("load_in_slo_pct", 100.0 * counts.goodput() / Math.max(1, r.sentInWindow()));
        List<Map<String, Object>> forwards = new ArrayList<>();
        for (int i = 0; i < senders.size(); i++) {
            Map<String, Double> after = queriesPerCall(senders.get(i));
            double calls = after.get("count") - before.get(i).get("count");
            double queries = after.get("sum") - before.get(i).get("sum");
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("gateway", senders.get(i).log().getFileName().toString());
            f.put("forward_calls", calls);
            f.put("queries_forwarded", queries);
            f.put("queries_per_call", queries / Math.max(1, calls));
            f.put("most_in_one_call_recently", after.get("max"));
            forwards.add(f);
        }
        out.put("forwards", forwards);
        out.put("conditions", RunConditions.span(atStart, RunConditions.now()));
        err.printf("%s: bulk: %d of %d requests of %d rows answered in full within %.0f ms (slowest %.0f ms); "
                + "the load meanwhile %.1f %% in SLO; forwards %s%n", FleetCommand.SCENARIO, inSlo, requests.size(),
                rows, bulkSloMs, maxMs, out.get("load_in_slo_pct"), forwards);
        return out;
    }

    /** The sender's {@value #QUERIES_PER_CALL} summary: count, sum and max (0 where it has none yet). */
    private static Map<String, Double> queriesPerCall(GatewayProcess g) throws InterruptedException {
        Map<String, Double> m = new LinkedHashMap<>(Map.of("count", 0.0, "sum", 0.0, "max", 0.0));
        for (PrometheusText.Sample s : PrometheusText.parse(GatewayMetrics.scrapeText(g)).samples()) {
            if (s.name().startsWith(QUERIES_PER_CALL + "_")) {
                m.merge(s.name().substring(QUERIES_PER_CALL.length() + 1), s.value(), Double::sum);
            }
        }
        return m;
    }

    /** Sends the bulk requests on a schedule of its own, not waiting for one to answer before the next. */
    private final class Bulk {

        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        private final List<GatewayProcess> senders;
        private final String app;
        private final RandomInputs inputs;
        private final List<CompletableFuture<Map<String, Object>>> sent = new ArrayList<>();
        private final Thread thread;
        private volatile boolean stopped;

        Bulk(List<GatewayProcess> senders, String app, RandomInputs inputs) {
            this.senders = senders;
            this.app = app;
            this.inputs = inputs;
            this.thread = new Thread(this::loop, "fleet-bulk");
            this.thread.setDaemon(true);
        }

        private void loop() {
            long period = Math.round(everyS * 1e9);
            long next = System.nanoTime() + period / 2;
            for (int n = 0; !stopped; n++) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    try {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (stopped) {
                    return;
                }
                GatewayProcess to = senders.get(n % senders.size());
                synchronized (sent) {
                    sent.add(send(to));
                }
                next += period;
            }
        }

        private CompletableFuture<Map<String, Object>> send(GatewayProcess to) {
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + GatewayProcess.HOST + ":" + to.port()
                            + "/" + app + "/predict"))
                    .timeout(timeout).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(inputs.batchQueryBody(rows))).build();
            long start = System.nanoTime();
            Map<String, Object> q = new LinkedHashMap<>();
            q.put("to", to.log().getFileName().toString());
            return http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray()).handle((response, error) -> {
                double ms = (System.nanoTime() - start) / 1e6;
                q.put("latency_ms", ms);
                if (error != null) {
                    q.put("error", String.valueOf(error));
                    q.put("in_slo", false);
                    return q;
                }
                q.put("status", response.statusCode());
                int predicted = 0;
                int defaults = 0;
                try {
                    for (JsonNode p : JSON.readTree(response.body()).path("batch_predictions")) {
                        if (p.path("default").asBoolean()) {
                            defaults++;
                        } else {
                            predicted++;
                        }
                    }
                } catch (IOException e) {
                    q.put("error", "unreadable answer: " + e.getMessage());
                }
                q.put("predicted", predicted);
                q.put("defaults", defaults);
                q.put("in_slo", response.statusCode() == 200 && predicted == rows && ms <= bulkSloMs);
                return q;
            });
        }

        void stop() {
            stopped = true;
            thread.interrupt();
        }

        List<Map<String, Object>> await() throws InterruptedException {
            thread.join();
            List<CompletableFuture<Map<String, Object>>> all;
            synchronized (sent) {
                all = List.copyOf(sent);
            }
            List<Map<String, Object>> out = new ArrayList<>();
            for (CompletableFuture<Map<String, Object>> f : all) {
                try {
                    out.add(f.get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS));
                } catch (ExecutionException | TimeoutException e) {
                    out.add(Map.of("error", String.valueOf(e), "in_slo", false));
                }
            }
            return out;
        }
    }
}

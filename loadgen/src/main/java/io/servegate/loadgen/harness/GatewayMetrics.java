package io.servegate.loadgen.harness;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

/**
 * The gateway's own view of its queries, from its Prometheus scrape ({@code GET /metrics}):
 * query latency from arrival in the handler to the answer (all apps, predictions and defaults)
 * and batch sizes. Two scrapes around a leg give that leg's share ({@link #minus}), which tells
 * the time spent inside the gateway's query path apart from the HTTP and client time around it.
 *
 * @param requests queries answered
 * @param latencySumS their summed latency, seconds
 * @param latencyBuckets cumulative counts per histogram bucket upper bound, seconds
 * @param lateAnswers    answers that left the gateway's query path after the app's SLO (its own count)
 * @param batches batches sent to replicas
 * @param batchInputs inputs in those batches
 * @param cpuSeconds     CPU time of the gateway process so far (all its threads, user and system)
 * @param gcPauseSeconds time its threads stood still in garbage-collection pauses
 * @param gcPauses       how many such pauses
 * @param deadlineLagBuckets cumulative counts per bucket upper bound, seconds, of how late the gateway's deadline
 *     timers ran ({@code servegate_deadline_lag_seconds})
 */
public record GatewayMetrics(long requests, double latencySumS, TreeMap<Double, Long> latencyBuckets, long lateAnswers,
        long batches, double batchInputs, double cpuSeconds, double gcPauseSeconds, long gcPauses,
        TreeMap<Double, Long> deadlineLagBuckets) {


    /**
     * What a leg looked like from inside the gateway.
     *
     * @param requests queries answered
     * @param meanMs their mean latency inside the gateway
     * @param p50UpperMs upper bound of the histogram bucket holding the median (bucket resolution)
     * @param p99UpperMs same for the 99th percentile
     * @param batches batches sent to replicas
     * @param meanBatchSize inputs per batch
     * @param cpuMsPerQuery the gateway process's CPU time per answered query: what a query costs it
     * @param gcPauseMs     garbage-collection pause time in the leg, and {@code gcPauses} how many
     * @param deadlineTimers deadline timers that ran in the leg (queries that reached their deadline)
     * @param deadlineTimersLate how many of them ran later than about 1, 2 and 4 ms after their due time (the
     *     first histogram bounds at or above those: 1, 2.10 and 4.19 ms)
     */
    public record Summary(long requests, Double meanMs, Double p50UpperMs, Double p99UpperMs, long lateAnswers,
            long batches, Double meanBatchSize, Double cpuMsPerQuery, double gcPauseMs, long gcPauses,
            long deadlineTimers, long[] deadlineTimersLate) {
    }

    /** Reads the relevant series out of a Prometheus text exposition. */
    public static GatewayMetrics parse(String text) {
        long requests = 0;
        double sum = 0;
        long batches = 0;
        long late = 0;
        double inputs = 0;
        double cpu = 0;
        double gcSum = 0;
        long gcCount = 0;
        TreeMap<Double, Long> buckets = new TreeMap<>();
        TreeMap<Double, Long> lag = new TreeMap<>();
        for (PrometheusText.Sample sample : PrometheusText.parse(text).samples()) {
            double value = sample.value();
            switch (sample.name()) {
                case "servegate_request_latency_seconds_count" -> requests += Math.round(value);
                case "servegate_request_latency_seconds_sum" -> sum += value;
                case "servegate_batch_size_count" -> batches += Math.round(value);
                case "servegate_answers_late_total" -> late += Math.round(value);
                case "servegate_batch_size_sum" -> inputs += value;
                case "process_cpu_time_ns_total" -> cpu += value / 1e9;
                case "jvm_gc_pause_seconds_sum" -> gcSum += value;
                case "jvm_gc_pause_seconds_count" -> gcCount += Math.round(value);
                case "servegate_request_latency_seconds_bucket" -> addBucket(buckets, sample.labels().get("le"), value);
                case "servegate_deadline_lag_seconds_bucket" -> addBucket(lag, sample.labels().get("le"), value);
                default -> {
                }
            }
        }
        return new GatewayMetrics(requests, sum, buckets, late, batches, inputs, cpu, gcSum, gcCount, lag);
    }

    private static void addBucket(TreeMap<Double, Long> buckets, String le, double value) {
        if (le != null) {
            double bound = "+Inf".equals(le) ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
            buckets.merge(bound, Math.round(value), Long::sum);
        }
    }

    /** Scrapes the gateway; null if that failed (the benchmark goes on without it). */
    public static GatewayMetrics scrape(GatewayProcess gateway) throws InterruptedException {
        String text = scrapeText(gateway);
        return text == null ? null : parse(text);
    }

    /** The raw scrape, or null if it failed. */
    public static String scrapeText(GatewayProcess gateway) throws InterruptedException {
        try {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + GatewayProcess.HOST + ":"
                    + gateway.port() + "/metrics")).timeout(Duration.ofSeconds(10))
                    // without it /metrics answers Clipper's JSON
                    .header("Accept", "text/plain;version=0.0.4").GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? r.body() : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** What happened between {@code earlier} and this scrape. */
    public GatewayMetrics minus(GatewayMetrics earlier) {
        return new GatewayMetrics(requests - earlier.requests, latencySumS - earlier.latencySumS,
                minus(latencyBuckets, earlier.latencyBuckets), lateAnswers - earlier.lateAnswers,
                batches - earlier.batches, batchInputs - earlier.batchInputs, cpuSeconds - earlier.cpuSeconds,
                gcPauseSeconds - earlier.gcPauseSeconds, gcPauses - earlier.gcPauses,
                minus(deadlineLagBuckets, earlier.deadlineLagBuckets));
    }

    private static TreeMap<Double, Long> minus(TreeMap<Double, Long> later, TreeMap<Double, Long> earlier) {
        TreeMap<Double, Long> out = new TreeMap<>();
        later.forEach((bound, n) -> out.put(bound, n - earlier.getOrDefault(bound, 0L)));
        return out;
    }

    /** The summary of a (usually differenced) scrape. */
    public Summary summary() {
        return new Summary(requests, requests > 0 ? latencySumS * 1000 / requests : null, upperBoundMs(0.50),
                upperBoundMs(0.99), lateAnswers, batches, batches > 0 ? batchInputs / batches : null,
                requests > 0 && cpuSeconds > 0 ? cpuSeconds * 1000 / requests : null, gcPauseSeconds * 1000, gcPauses,
                count(deadlineLagBuckets, Double.POSITIVE_INFINITY),
                new long[] {laterThan(deadlineLagBuckets, 0.001), laterThan(deadlineLagBuckets, 0.002),
                        laterThan(deadlineLagBuckets, 0.004)});
    }

    private static long count(TreeMap<Double, Long> cumulative, double bound) {
        Long n = cumulative.get(bound);
        return n == null ? 0 : n;
    }

    /** Observations above the first bucket bound at or above {@code seconds}. */
    private static long laterThan(TreeMap<Double, Long> cumulative, double seconds) {
        Map.Entry<Double, Long> within = cumulative.ceilingEntry(seconds);
        return within == null ? 0 : count(cumulative, Double.POSITIVE_INFINITY) - within.getValue();
    }

    /** The smallest bucket bound holding the q-quantile, ms; null without buckets or counts. */
    Double upperBoundMs(double q) {
        Long total = latencyBuckets.get(Double.POSITIVE_INFINITY);
        if (total == null || total <= 0) {
            return null;
        }
        double rank = q * total;
        for (Map.Entry<Double, Long> e : latencyBuckets.entrySet()) {
            if (e.getValue() >= rank) {
                return e.getKey().isInfinite() ? null : e.getKey() * 1000;
            }
        }
        return null;
    }
}

package io.servegate.gateway.metrics;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * The gateway's metrics in the JSON shape of Clipper's query frontend {@code GET /metrics}: four
 * lists, {@code counters}, {@code ratio_counters}, {@code meters} and {@code histograms}, whose
 * entries are one-key objects {@code {"<name>": {fields}}} named as Clipper names them
 * ({@code app:<app>:prediction_latency}, {@code model:<model>:<version>:batch_size}, ...).
 *
 * <p>Everything is read from the Micrometer registry at report time, except the meters' 1, 5 and
 * 15 minute rates: exponentially weighted averages that need a regular tick, which this class
 * takes every 5 seconds as Clipper does. Statistics Micrometer does not keep (a histogram's
 * minimum and standard deviation, the batch size's percentiles) are reported as {@code NaN}, as
 * Clipper reports a ratio with nothing counted yet.
 */
public final class ClipperMetrics implements AutoCloseable {

    /** The tick interval of the meters' moving averages, as Clipper's meters tick. */
    static final Duration TICK = Duration.ofSeconds(5);

    private static final String LATENCY = "servegate.request.latency";
    private static final String BATCH_SIZE = "servegate.batch.size";
    private static final String CACHE = "servegate.cache.requests";
    private static final String METER_UNIT = "events per second";

    private final MeterRegistry registry;
    private final LongSupplier clock;
    private final Map<String, Rates> rates = new ConcurrentHashMap<>();
    private final Disposable ticker;
    private volatile long lastTickNanos;

    /**
     * @param registry where the gateway's meters are
     * @param clock nanosecond clock for the meters' mean rates
     * @param timer runs the 5 s tick of the meters' moving averages
     */
    public ClipperMetrics(MeterRegistry registry, LongSupplier clock, Scheduler timer) {
        this.registry = registry;
        this.clock = clock;
        this.lastTickNanos = clock.getAsLong();
        this.ticker = timer.schedulePeriodically(this::tick, TICK.toNanos(), TICK.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** The report, ready to be written as JSON (NaN where a statistic is unknown). */
    public Map<String, List<Map<String, Object>>> report() {
        List<Map<String, Object>> counters = new ArrayList<>();
        List<Map<String, Object>> ratios = new ArrayList<>();
        List<Map<String, Object>> meters = new ArrayList<>();
        List<Map<String, Object>> histograms = new ArrayList<>();
        long now = clock.getAsLong();

        latencyByApp().forEach((app, timers) -> {
            String prefix = "app:" + app + ":";
            long answers = timers.stream().mapToLong(Timer::count).sum();
            long defaults = timers.stream().filter(t -> "true".equals(t.getId().getTag("default")))
                    .mapToLong(Timer::count).sum();
            counters.add(entry(prefix + "num_predictions", Map.of("count", answers)));
            ratios.add(entry(prefix + "default_prediction_ratio", Map.of("ratio", ratio(defaults, answers))));
            meters.add(entry(prefix + "prediction_throughput", meter(prefix + "prediction_throughput", answers, now)));
            histograms.add(entry(prefix + "prediction_latency", histogram("microseconds",
                    timers.stream().map(t -> Stats.ofTimer(t.takeSnapshot())).toList())));
        });

        long aggregate = 0;
        for (Map.Entry<String, List<DistributionSummary>> e : batchesByModel().entrySet()) {
            String prefix = "model:" + e.getKey() + ":";
            long predictions = predictions(e.getValue());
            aggregate += predictions;
            counters.add(entry(prefix + "num_predictions", Map.of("count", predictions)));
            meters.add(entry(prefix + "prediction_throughput",
                    meter(prefix + "prediction_throughput", predictions, now)));
            histograms.add(entry(prefix + "batch_size", histogram("queries",
                    e.getValue().stream().map(s -> Stats.ofSummary(s.takeSnapshot())).toList())));
        }
        counters.add(entry("internal:aggregate_num_predictions", Map.of("count", aggregate)));
        meters.add(entry("internal:aggregate_model_throughput",
                meter("internal:aggregate_model_throughput", aggregate, now)));
        // Clipper keeps a hit ratio per model; Servegate's prediction cache is one, shared by all models
        ratios.add(entry("internal:prediction_cache_hit_ratio", Map.of("ratio", ratio(cacheRequests("hit"),
                cacheRequests("hit") + cacheRequests("miss")))));

        Map<String, List<Map<String, Object>>> report = new LinkedHashMap<>();
        report.put("counters", counters);
        report.put("ratio_counters", ratios);
        report.put("meters", meters);
        report.put("histograms", histograms);
        return report;
    }

    /** Feeds the moving averages the events counted since the last tick; runs every {@link #TICK}. */
    synchronized void tick() {
        Map<String, Long> counts = new TreeMap<>();
        latencyByApp().forEach((app, timers) -> counts.put("app:" + app + ":prediction_throughput",
                timers.stream().mapToLong(Timer::count).sum()));
        long aggregate = 0;
        for (Map.Entry<String, List<DistributionSummary>> e : batchesByModel().entrySet()) {
            long predictions = predictions(e.getValue());
            counts.put("model:" + e.getKey() + ":prediction_throughput", predictions);
            aggregate += predictions;
        }
        counts.put("internal:aggregate_model_throughput", aggregate);

        rates.keySet().retainAll(counts.keySet());
        // a meter first seen now appeared after the previous tick, which its mean rate counts from
        long since = lastTickNanos;
        counts.forEach((name, count) -> rates.computeIfAbsent(name, n -> new Rates(since)).tick(count));
        lastTickNanos = clock.getAsLong();
    }

    @Override
    public void close() {
        ticker.dispose();
    }

    private Map<String, List<Timer>> latencyByApp() {
        return registry.find(LATENCY).timers().stream()
                .collect(Collectors.groupingBy(t -> t.getId().getTag("app"), TreeMap::new, Collectors.toList()));
    }

    /** Batch size summaries of the current replicas, by {@code <model>:<version>} (Clipper's model id). */
    private Map<String, List<DistributionSummary>> batchesByModel() {
        return registry.find(BATCH_SIZE).summaries().stream()
                .collect(Collectors.groupingBy(s -> s.getId().getTag("model") + ":" + s.getId().getTag("version"),
                        TreeMap::new, Collectors.toList()));
    }

    /** Queries sent to a model's replicas: the sum of their batch sizes. */
    private static long predictions(List<DistributionSummary> batchSizes) {
        return Math.round(batchSizes.stream().mapToDouble(DistributionSummary::totalAmount).sum());
    }

    private long cacheRequests(String result) {
        return Math.round(registry.find(CACHE).tag("result", result).counters().stream()
                .mapToDouble(c -> c.count()).sum());
    }

    private Map<String, Object> meter(String name, long count, long now) {
        Rates r = rates.get(name);
        if (r == null) {
            r = new Rates(lastTickNanos);
        }
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("unit", METER_UNIT);
        fields.put("rate", ratio(count, Math.max(1, now - r.sinceNanos) / 1e9));
        fields.put("rate_1min", r.m1.ratePerSecond());
        fields.put("rate_5min", r.m5.ratePerSecond());
        fields.put("rate_15min", r.m15.ratePerSecond());
        return fields;
    }

    private static Map<String, Object> histogram(String unit, List<Stats> parts) {
        Stats s = Stats.merge(parts);
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("unit", unit);
        fields.put("size", s.count());
        fields.put("min", Double.NaN);
        fields.put("max", s.max());
        fields.put("mean", ratio(s.total(), s.count()));
        fields.put("std_dev", Double.NaN);
        fields.put("p50", s.quantile(0.50));
        fields.put("p95", s.quantile(0.95));
        fields.put("p99", s.quantile(0.99));
        return fields;
    }

    private static Map<String, Object> entry(String name, Map<String, Object> fields) {
        return Map.of(name, fields);
    }

    private static double ratio(double numerator, double denominator) {
        return denominator == 0 ? Double.NaN : numerator / denominator;
    }

    /** One meter's moving averages and the count they have seen. */
    private static final class Rates {
        final Ewma m1 = new Ewma(TICK, Duration.ofMinutes(1));
        final Ewma m5 = new Ewma(TICK, Duration.ofMinutes(5));
        final Ewma m15 = new Ewma(TICK, Duration.ofMinutes(15));
        final long sinceNanos;
        long lastCount;

        Rates(long sinceNanos) {
            this.sinceNanos = sinceNanos;
        }

        void tick(long count) {
            // a count that went down lost a replica's meters: start over from it rather than go negative
            long delta = Math.max(0, count - lastCount);
            lastCount = count;
            for (Ewma ewma : List.of(m1, m5, m15)) {
                ewma.tick(delta);
            }
        }
    }

    /**
     * A distribution as Micrometer keeps it: count, total, recent maximum and, where the meter
     * publishes a histogram, cumulative counts at its bucket bounds.
     */
    record Stats(long count, double total, double max, double[] bounds, double[] cumulative) {

        static Stats ofTimer(HistogramSnapshot s) {
            CountAtBucket[] buckets = s.histogramCounts();
            double[] bounds = new double[buckets.length];
            double[] cumulative = new double[buckets.length];
            for (int i = 0; i < buckets.length; i++) {
                bounds[i] = buckets[i].bucket(TimeUnit.MICROSECONDS);
                cumulative[i] = buckets[i].count();
            }
            return new Stats(s.count(), s.total(TimeUnit.MICROSECONDS), s.max(TimeUnit.MICROSECONDS), bounds,
                    cumulative);
        }

        static Stats ofSummary(HistogramSnapshot s) {
            CountAtBucket[] buckets = s.histogramCounts();
            double[] bounds = new double[buckets.length];
            double[] cumulative = new double[buckets.length];
            for (int i = 0; i < buckets.length; i++) {
                bounds[i] = buckets[i].bucket();
                cumulative[i] = buckets[i].count();
            }
            return new Stats(s.count(), s.total(), s.max(), bounds, cumulative);
        }

        /** The parts' sum; their buckets are summed only when all have the same bounds. */
        static Stats merge(List<Stats> parts) {
            long count = 0;
            double total = 0;
            double max = 0;
            double[] bounds = parts.isEmpty() ? new double[0] : parts.get(0).bounds();
            double[] cumulative = new double[bounds.length];
            for (Stats p : parts) {
                count += p.count();
                total += p.total();
                max = Math.max(max, p.max());
                if (Arrays.equals(p.bounds(), bounds)) {
                    for (int i = 0; i < bounds.length; i++) {
                        cumulative[i] += p.cumulative()[i];
                    }
                } else {
                    bounds = new double[0];
                    cumulative = new double[0];
                }
            }
            return new Stats(count, total, max, bounds, cumulative);
        }

        /**
         * The q-quantile estimated from the buckets as Prometheus' {@code histogram_quantile}
         * does (linear within a bucket, the highest bound beyond it); NaN without buckets or data.
         */
        double quantile(double q) {
            if (bounds.length == 0 || count == 0) {
                return Double.NaN;
            }
            double rank = q * count;
            double lower = 0;
            double below = 0;
            for (int i = 0; i < bounds.length; i++) {
                if (cumulative[i] >= rank) {
                    double in = cumulative[i] - below;
                    return in == 0 ? bounds[i] : lower + (bounds[i] - lower) * (rank - below) / in;
                }
                lower = bounds[i];
                below = cumulative[i];
            }
            return lower;
        }
    }
}

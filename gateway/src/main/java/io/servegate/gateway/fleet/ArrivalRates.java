package io.servegate.gateway.fleet;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Queries per second this gateway received for each model version (all of them, forwarded or
 * not): what the fleet balances ownership by. Counting is a lock-free add on the request path;
 * {@link #rates()}, called once per heartbeat, turns the counts since the last call into rates,
 * smoothed so that one quiet heartbeat does not move a version.
 */
public final class ArrivalRates {

    /** Weight of the newest interval in the smoothed rate. */
    private static final double ALPHA = 0.5;
    /** Rates below this are dropped from what is published. */
    private static final double NEGLIGIBLE = 0.01;

    private final ConcurrentMap<String, LongAdder> counts = new ConcurrentHashMap<>();
    private final Map<String, Double> smoothed = new TreeMap<>();
    private final LongSupplier clock;
    private long lastNanos;

    public ArrivalRates(LongSupplier clock) {
        this.clock = clock;
        this.lastNanos = clock.getAsLong();
    }

    /** Counts one query for the version. */
    public void arrived(String model, String version) {
        String key = Ownership.key(model, version);
        LongAdder n = counts.get(key);
        (n != null ? n : counts.computeIfAbsent(key, k -> new LongAdder())).increment();
    }

    /** Arrivals per second by version since the previous call, smoothed. */
    public synchronized Map<String, Double> rates() {
        long now = clock.getAsLong();
        double seconds = Math.max(1e-3, (now - lastNanos) / 1e9);
        lastNanos = now;
        for (Map.Entry<String, LongAdder> e : counts.entrySet()) {
            double rate = e.getValue().sumThenReset() / seconds;
            smoothed.merge(e.getKey(), rate, (old, x) -> ALPHA * x + (1 - ALPHA) * old);
        }
        smoothed.values().removeIf(r -> r < NEGLIGIBLE);
        return Map.copyOf(smoothed);
    }
}

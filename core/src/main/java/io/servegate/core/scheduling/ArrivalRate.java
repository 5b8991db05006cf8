package io.servegate.core.scheduling;

/**
 * Queries per second, as an exponentially decayed count of arrivals with a time constant of
 * {@code tauNanos}: recent seconds weigh most, and no window of timestamps is kept.
 */
final class ArrivalRate {

    private final double tauNanos;
    private double count;
    private long last = Long.MIN_VALUE;

    ArrivalRate(long tauNanos) {
        this.tauNanos = tauNanos;
    }

    void record(long now) {
        decay(now);
        count += 1;
    }

    double perSecond(long now) {
        decay(now);
        return count / (tauNanos / 1e9);
    }

    private void decay(long now) {
        if (last != Long.MIN_VALUE && now > last) {
            count *= Math.exp(-(now - last) / tauNanos);
        }
        last = Math.max(last, now);
    }
}

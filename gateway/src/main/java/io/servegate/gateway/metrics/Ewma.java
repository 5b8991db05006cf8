package io.servegate.gateway.metrics;

import java.time.Duration;

/**
 * An exponentially weighted moving average of an event rate, ticked at a fixed interval: the
 * 1, 5 and 15 minute rates Clipper's meters report (the Unix load average's formula). The first
 * tick sets the rate to that interval's; each later one moves it towards the interval's rate by
 * {@code 1 - exp(-interval / window)}. Ticks come from one thread; the rate may be read from any.
 */
final class Ewma {

    private final double alpha;
    private final double intervalSeconds;
    private volatile double ratePerSecond;
    private boolean started;

    /**
     * @param interval the time between ticks
     * @param window   the averaging window, e.g. one minute
     */
    Ewma(Duration interval, Duration window) {
        this.intervalSeconds = interval.toNanos() / 1e9;
        this.alpha = 1 - Math.exp(-(double) interval.toNanos() / window.toNanos());
    }

    /** Folds in the events counted during the interval that just ended. */
    void tick(long events) {
        double instant = events / intervalSeconds;
        ratePerSecond = started ? ratePerSecond + alpha * (instant - ratePerSecond) : instant;
        started = true;
    }

    /** @return events per second; 0 before the first tick */
    double ratePerSecond() {
        return ratePerSecond;
    }
}

package io.servegate.gateway.containers;

import java.time.Duration;

/**
 * Exponential restart backoff: {@code initial}, doubled after each failure in a row, capped at
 * {@code max}, so a container that crashes at once is restarted at a falling rate, not in a storm.
 *
 * @param initial the delay before the first restart
 * @param max     the longest delay
 */
public record Backoff(Duration initial, Duration max) {

    public Backoff {
        if (initial.isNegative() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("backoff needs 0 <= initial <= max, got " + initial + " and " + max);
        }
    }

    /** @return the delay before the restart that follows {@code failuresInARow} earlier failures in a row */
    public Duration delay(int failuresInARow) {
        Duration d = initial;
        for (int i = 0; i < failuresInARow && d.compareTo(max) < 0; i++) {
            d = d.multipliedBy(2);
        }
        return d.compareTo(max) > 0 ? max : d;
    }
}

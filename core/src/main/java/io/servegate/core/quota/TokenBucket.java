package io.servegate.core.quota;

/**
 * A token bucket: {@code perSecond} tokens a second refill it up to {@code burst}; each admitted
 * request takes one. Time is passed in (nanoseconds of any monotonic clock), so the simulator
 * and tests drive it in virtual time. Thread-safe; one bucket holds two numbers, whatever the load.
 */
public final class TokenBucket {

    private static final double NANOS_PER_SECOND = 1e9;

    private final double perSecond;
    private final double burst;
    private double tokens;
    private long updatedNanos;

    /**
     * Starts full.
     *
     * @param perSecond refill rate, {@code > 0}
     * @param burst     capacity, {@code >= 1}
     * @param nowNanos  the clock's current reading
     */
    public TokenBucket(double perSecond, int burst, long nowNanos) {
        if (!(perSecond > 0) || Double.isInfinite(perSecond)) {
            throw new IllegalArgumentException("perSecond must be > 0 and finite, was " + perSecond);
        }
        if (burst < 1) {
            throw new IllegalArgumentException("burst must be >= 1, was " + burst);
        }
        this.perSecond = perSecond;
        this.burst = burst;
        this.tokens = burst;
        this.updatedNanos = nowNanos;
    }

    /**
     * Takes a token if there is one.
     *
     * @return 0 if a token was taken, else how many nanoseconds until one will be there ({@code > 0})
     */
    public synchronized long tryTake(long nowNanos) {
        if (nowNanos > updatedNanos) {
            tokens = Math.min(burst, tokens + (nowNanos - updatedNanos) * perSecond / NANOS_PER_SECOND);
            updatedNanos = nowNanos;
        }
        if (tokens >= 1) {
            tokens -= 1;
            return 0;
        }
        return Math.max(1, (long) Math.ceil((1 - tokens) * NANOS_PER_SECOND / perSecond));
    }

    /** Gives back a token taken by {@link #tryTake} for a request that was then refused elsewhere. */
    public synchronized void giveBack() {
        tokens = Math.min(burst, tokens + 1);
    }

    public double perSecond() {
        return perSecond;
    }

    public int burst() {
        return (int) burst;
    }
}

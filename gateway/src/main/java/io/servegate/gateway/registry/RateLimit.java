package io.servegate.gateway.registry;

/**
 * A query quota: {@code perSecond} requests a second with bursts of up to {@code burst}, as a
 * token bucket ({@code core.quota.TokenBucket}). Set on an app ({@code add_app}'s
 * {@code rate_limit}) or on one of its query keys.
 *
 * @param perSecond the sustained rate, {@code > 0}
 * @param burst     how many requests may come at once after a quiet spell, {@code >= 1}
 */
public record RateLimit(double perSecond, int burst) {

    /** The most a quota may admit a second: beyond it, a gateway's other limits apply first. */
    public static final double MAX_PER_SECOND = 1_000_000;
    /** The largest burst. */
    public static final int MAX_BURST = 1_000_000;

    /** @throws IllegalArgumentException naming the field out of range */
    public RateLimit {
        if (!(perSecond > 0) || perSecond > MAX_PER_SECOND) {
            throw new IllegalArgumentException("'rate_limit.per_second' must be > 0 and at most " + (long) MAX_PER_SECOND
                    + ", got " + perSecond);
        }
        if (burst < 1 || burst > MAX_BURST) {
            throw new IllegalArgumentException("'rate_limit.burst' must be between 1 and " + MAX_BURST + ", got "
                    + burst);
        }
    }
}

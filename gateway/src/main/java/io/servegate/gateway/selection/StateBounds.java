package io.servegate.gateway.selection;

import java.time.Duration;

/**
 * Bounds on the per-context (per-user) states of a {@link SelectionStateStore}, so that feedback
 * with ever new contexts cannot grow it without limit.
 *
 * @param maxStatesPerApp how many per-context states one application (and policy) keeps at most;
 *                        beyond it the least recently written one is evicted. The application-wide
 *                        state does not count and is never evicted.
 * @param ttl             how long a state lives after its last write; {@code null} = forever
 */
public record StateBounds(long maxStatesPerApp, Duration ttl) {

    /** The defaults of {@code servegate.selection.*}: 100,000 states per app, 7 days. */
    public static final StateBounds DEFAULT = new StateBounds(100_000, Duration.ofDays(7));

    /** No expiry, {@code maxStatesPerApp} states per app. */
    public static StateBounds unexpiring(long maxStatesPerApp) {
        return new StateBounds(maxStatesPerApp, null);
    }

    /**
     * @throws IllegalArgumentException if {@code maxStatesPerApp < 1} or {@code ttl} is under 1 ms
     */
    public StateBounds {
        if (maxStatesPerApp < 1) {
            throw new IllegalArgumentException("maxStatesPerApp must be >= 1, got " + maxStatesPerApp);
        }
        if (ttl != null && ttl.toMillis() < 1) {
            throw new IllegalArgumentException("ttl must be >= 1 ms or null (no expiry), got " + ttl);
        }
    }
}

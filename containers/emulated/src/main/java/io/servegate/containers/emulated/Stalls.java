package io.servegate.containers.emulated;

/**
 * Periodic stalls of an accelerator (a driver hiccup, a co-tenant's burst, a garbage collection in
 * the serving process): from {@code originNanos}, a stall of {@code stallNanos} begins every
 * {@code everyNanos}, the first one {@code everyNanos} after the origin. Work stands still while
 * a stall lasts: a batch running or starting during one finishes that much later.
 *
 * @param originNanos when the schedule starts, a {@link System#nanoTime()} value
 * @param everyNanos the period; a stall begins at origin + k·period for k ≥ 1
 * @param stallNanos how long each stall lasts, less than the period
 */
record Stalls(long originNanos, long everyNanos, long stallNanos) {

    /** No stalls at all. */
    static final Stalls NONE = new Stalls(0, 1, 0);

    Stalls {
        if (everyNanos <= 0 || stallNanos < 0 || stallNanos >= everyNanos) {
            throw new IllegalArgumentException("stalls need a positive period longer than the stall, got every "
                    + everyNanos / 1e6 + " ms, stall " + stallNanos / 1e6 + " ms");
        }
    }

    /**
     * When work of {@code workNanos} that starts at {@code start} finishes: the stalls it meets,
     * including one under way at its start, add their remaining length.
     */
    long finish(long start, long workNanos) {
        if (stallNanos == 0) {
            return start + workNanos;
        }
        long t = start;
        long left = workNanos;
        while (true) {
            long since = t - originNanos;
            long k = Math.floorDiv(since, everyNanos);
            long stallStart = originNanos + k * everyNanos;
            if (k >= 1 && t < stallStart + stallNanos) {
                t = stallStart + stallNanos; // inside a stall: wait for its end
            }
            long nextStall = originNanos + (Math.floorDiv(t - originNanos, everyNanos) + 1) * everyNanos;
            if (t + left <= nextStall) {
                return t + left;
            }
            left -= nextStall - t;
            t = nextStall;
        }
    }
}

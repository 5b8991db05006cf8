package io.servegate.core.scheduling;

/**
 * What the profiling policies do while nothing fresh is known of the model's cost (before the
 * first sample, or after a quiet spell longer than the sample age limit): send the earliest query
 * alone to an idle lane. Its service time is a fresh sample, and the profile grows from there.
 */
final class Cold {

    private Cold() {
    }

    /** Whether a query was sent; false when every lane is busy. */
    static <P> boolean send(ModelScheduler<P> s, long now) {
        Lane idle = s.earliestLane(1);
        if (idle == null) {
            return false;
        }
        s.send(idle, 1, now, now, now);
        return true;
    }
}

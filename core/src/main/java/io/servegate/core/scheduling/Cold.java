package io.servegate.core.scheduling;

/**
 * What the profiling policies do before anything about the model's cost is known: send the
 * earliest query alone to an idle lane. Its service time is the first sample, and the profile
 * grows from there; the warm-up and the profiling pass at registration normally make this moot.
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

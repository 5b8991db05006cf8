package io.servegate.core.scheduling;

/**
 * Where and when the profiling policies' next batch can run: the lane that will be free earliest,
 * its profile, when the container could start the batch, and when a batch of {@code b} would
 * answer ({@code answerBase + service(b)}). Finding it may itself act: before anything is known
 * of the model's cost it sends a probe ({@link Cold}), and a lane that is still busy for longer
 * than the transport overhead asks to be woken when it is not.
 */
record Slot(Lane lane, ReplicaProfile profile, long start, long answerBase) {

    /** Nothing more to do now. */
    static final Slot STOP = new Slot(null, null, 0, 0);
    /** Something was sent; look again. */
    static final Slot AGAIN = new Slot(null, null, 0, 0);

    /** The next slot among lanes holding fewer than {@code depth} batches, or {@link #STOP} or {@link #AGAIN}. */
    static <P> Slot next(ModelScheduler<P> s, int depth, long now) {
        Lane lane = s.earliestLane(depth);
        if (lane == null) {
            return STOP;
        }
        ReplicaProfile profile = s.profile(lane, now);
        if (profile == null) {
            return Cold.send(s, now) ? AGAIN : STOP;
        }
        long overhead = profile.overheadNanos();
        if (now < lane.freeAt - overhead) {
            // sent ahead by the overhead, not sooner: behind its own batches, or another scheduler's (busyFor)
            s.wakeAt(lane.freeAt - overhead);
            return STOP;
        }
        long start = Math.max(now + overhead / 2, lane.freeAt);
        return new Slot(lane, profile, start, start + (overhead - overhead / 2) + s.config().safetyMarginNanos());
    }
}

package io.servegate.workload.arrival;

import java.util.SplittableRandom;

/**
 * The arrival times of one run: an {@link ArrivalProcess} drawn from the run's seed. The random
 * stream is the first split of {@code new SplittableRandom(seed)}, as the simulator draws a run's
 * arrivals, so a live run and a simulated run of the same process and seed offer the same queries
 * at the same offsets from their start. Not thread-safe: one driver thread draws the times.
 */
public final class ArrivalSchedule {

    private final ArrivalProcess process;
    private final SplittableRandom random;
    private long last;

    public ArrivalSchedule(ArrivalProcess process, long seed) {
        this.process = process;
        this.random = streamOf(seed);
    }

    /** The random stream a run of {@code seed} draws its arrivals from. */
    private static SplittableRandom streamOf(long seed) {
        return new SplittableRandom(seed).split();
    }

    /** The next arrival, in nanoseconds from the run's start, or {@link Long#MAX_VALUE} when there are no more. */
    public long next() {
        if (last != Long.MAX_VALUE) {
            last = process.next(last, random);
        }
        return last;
    }
}

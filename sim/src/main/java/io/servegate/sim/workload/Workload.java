package io.servegate.sim.workload;

import io.servegate.workload.arrival.ArrivalProcess;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * What arrives during a run: each query's time, model and deadline. Opened afresh for every run
 * (processes such as uniform arrivals keep state), from the run's own random stream.
 */
public interface Workload {

    /** A fresh stream of arrivals. */
    Stream open(SplittableRandom random);

    /** Arrivals in time order. */
    interface Stream {
        /** Fills {@code out} with the next arrival; false when there are no more. */
        boolean next(Arrival out);
    }

    /** One arrival; a holder that the simulator reuses. */
    final class Arrival {
        public long at;
        public int model;
        public long deadline;

        /** Sets all three fields. */
        public void set(long at, int model, long deadline) {
            this.at = at;
            this.model = model;
            this.deadline = deadline;
        }
    }

    /**
     * Arrivals from {@code process} until {@code endNanos}, each for the model {@code chooser}
     * picks and due that model's SLO later.
     */
    static Workload generated(Supplier<ArrivalProcess> process, Supplier<ModelChooser> chooser, long[] sloNanos,
            long endNanos) {
        return random -> {
            ArrivalProcess p = process.get();
            ModelChooser c = chooser.get();
            long[] last = {0};
            return out -> {
                long t = p.next(last[0], random);
                if (t >= endNanos) {
                    return false;
                }
                last[0] = t;
                int m = c.next(random);
                out.set(t, m, t + sloNanos[m]);
                return true;
            };
        };
    }
}

package io.servegate.sim;

import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.Load;
import io.servegate.workload.arrival.Gaussian;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * An emulated container: it runs what it is sent in arrival order on {@code concurrency} slots, a
 * batch for its latency model's draw and a model load for that model's load time, and answers half
 * the transport overhead after it finishes (the overhead drawn for each batch when it spreads). It knows nothing of the scheduler's lanes or of which
 * models it holds, as a real container does not: the scheduler decides.
 */
final class SimReplica {

    final ReplicaSpec spec;
    final SchedulerRun<?> run;
    private final SplittableRandom random;
    private final long[] slotFreeAt;
    /** Batches and loads sent and not yet answered. */
    final List<Object> inFlight = new ArrayList<>();
    boolean alive = true;
    /** Scaled down: takes no new batch, and leaves once the last one has answered. */
    boolean retiring;
    /** Gone: died, or retired and drained. */
    boolean left;
    long busyNanos;
    long diedAt = Long.MAX_VALUE;

    SimReplica(ReplicaSpec spec, SchedulerRun<?> run, SplittableRandom random) {
        this.spec = spec;
        this.run = run;
        this.random = random;
        this.slotFreeAt = new long[spec.concurrency()];
    }

    /** A draw of the service time, e.g. for the profiling pass. */
    long sample(int size) {
        return spec.latency().serviceNanos(size, random);
    }

    /** Takes {@code batch}, sent at {@code now}, and schedules its answer. */
    void accept(Batch<Object> batch, long now, EventQueue events) {
        long service = sample(batch.size());
        long overhead = overhead();
        long out = overhead / 2;
        events.add(new Answer(batch, service), finish(service, now, out) + overhead - out);
    }

    /** Takes {@code load}, sent at {@code now}, which takes {@code loadNanos}, and schedules its answer. */
    void accept(Load load, long loadNanos, long now, EventQueue events) {
        long overhead = overhead();
        long out = overhead / 2;
        events.add(new Answer(load, loadNanos), finish(loadNanos, now, out) + overhead - out);
    }

    /** This round trip's transport overhead: the spec's, times its noise when it spreads (drawn after the service time). */
    private long overhead() {
        double sigma = spec.overheadSigma();
        return sigma == 0 ? spec.overheadNanos()
                : Math.round(spec.overheadNanos() * Math.exp(sigma * Gaussian.next(random) - sigma * sigma / 2));
    }

    /** When something sent at {@code now}, arriving {@code out} later and taking {@code nanos}, finishes on the slot free first. */
    private long finish(long nanos, long now, long out) {
        int slot = 0;
        for (int i = 1; i < slotFreeAt.length; i++) {
            if (slotFreeAt[i] < slotFreeAt[slot]) {
                slot = i;
            }
        }
        long start = Math.max(now + out, slotFreeAt[slot]);
        slotFreeAt[slot] = spec.latency().finishNanos(start, nanos);
        return slotFreeAt[slot];
    }

    /** The replica dies: what it was running is lost, and the caller fails those batches and loads. */
    List<Object> die(long now) {
        alive = false;
        left = true;
        diedAt = now;
        List<Object> lost = List.copyOf(inFlight);
        inFlight.clear();
        return lost;
    }

    /** A batch's or a load's answer reaching the scheduler. */
    private final class Answer extends Event {
        private final Object action;
        private final long nanos;

        Answer(Object action, long nanos) {
            this.action = action;
            this.nanos = nanos;
            inFlight.add(action);
        }

        @Override
        void fire(long now) {
            if (alive && inFlight.remove(action)) {
                busyNanos += nanos;
                run.answered(action, nanos, now);
                if (retiring && inFlight.isEmpty()) {
                    run.leave(SimReplica.this, now);
                }
            }
        }
    }
}

package io.servegate.sim;

import io.servegate.core.scheduling.Batch;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * An emulated container: it runs the batches it is sent in arrival order on {@code concurrency}
 * slots, each for its latency model's draw, and answers half the transport overhead after it
 * finishes. It knows nothing of the scheduler's lanes, as a real container does not.
 */
final class SimReplica {

    final ReplicaSpec spec;
    final ModelRun model;
    private final SplittableRandom random;
    private final long[] slotFreeAt;
    private final long out;  // transport, gateway to container
    private final long back; // and back
    final List<Batch<Object>> inFlight = new ArrayList<>();
    boolean alive = true;
    /** Scaled down: takes no new batch, and leaves once the last one has answered. */
    boolean retiring;
    /** Gone: died, or retired and drained. */
    boolean left;
    long busyNanos;
    long diedAt = Long.MAX_VALUE;

    SimReplica(ReplicaSpec spec, ModelRun model, SplittableRandom random) {
        this.spec = spec;
        this.model = model;
        this.random = random;
        this.slotFreeAt = new long[spec.concurrency()];
        this.out = spec.overheadNanos() / 2;
        this.back = spec.overheadNanos() - out;
    }

    /** A draw of the service time, e.g. for the profiling pass. */
    long sample(int size) {
        return spec.latency().serviceNanos(size, random);
    }

    /** Takes {@code batch}, sent at {@code now}, and schedules its answer. */
    void accept(Batch<Object> batch, long now, EventQueue events) {
        int slot = 0;
        for (int i = 1; i < slotFreeAt.length; i++) {
            if (slotFreeAt[i] < slotFreeAt[slot]) {
                slot = i;
            }
        }
        long start = Math.max(now + out, slotFreeAt[slot]);
        long service = sample(batch.size());
        slotFreeAt[slot] = start + service;
        inFlight.add(batch);
        events.add(new Completion(batch, service), start + service + back);
    }

    /** The replica dies: what it was running is lost, and the caller fails those batches. */
    List<Batch<Object>> die(long now) {
        alive = false;
        left = true;
        diedAt = now;
        List<Batch<Object>> lost = List.copyOf(inFlight);
        inFlight.clear();
        return lost;
    }

    /** A batch's answer reaching the scheduler. */
    private final class Completion extends Event {
        private final Batch<Object> batch;
        private final long service;

        Completion(Batch<Object> batch, long service) {
            this.batch = batch;
            this.service = service;
        }

        @Override
        void fire(long now) {
            if (alive && inFlight.remove(batch)) {
                busyNanos += service;
                model.completed(batch, service, now);
                if (retiring && inFlight.isEmpty()) {
                    model.leave(SimReplica.this, now);
                }
            }
        }
    }
}

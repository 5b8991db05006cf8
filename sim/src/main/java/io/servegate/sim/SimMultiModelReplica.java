package io.servegate.sim;

import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.Load;
import java.util.SplittableRandom;

/**
 * An emulated multi-model container: it runs the loads and batches it is sent in arrival order,
 * one at a time, a load for its model's load time and a batch for its latency model's draw, and
 * answers half the transport overhead after it finishes. The scheduler decides what it holds.
 */
final class SimMultiModelReplica {

    final String id;
    private final LatencyModel latency;
    private final SplittableRandom random;
    private final long out;  // transport, gateway to container
    private final long back; // and back
    private final ManyModelSimulation sim;
    private long freeAt;
    long busyNanos;

    SimMultiModelReplica(String id, LatencyModel latency, long overheadNanos, SplittableRandom random,
            ManyModelSimulation sim) {
        this.id = id;
        this.latency = latency;
        this.random = random;
        this.out = overheadNanos / 2;
        this.back = overheadNanos - out;
        this.sim = sim;
    }

    /** Takes {@code load}, sent at {@code now}, which takes {@code loadNanos}, and schedules its answer. */
    void accept(Load load, long loadNanos, long now) {
        long finish = run(loadNanos, now);
        sim.events().add(new Event() {
            @Override
            void fire(long at) {
                sim.loadCompleted(load, loadNanos, at);
            }
        }, finish + back);
    }

    /** Takes {@code batch}, sent at {@code now}, and schedules its answer. */
    void accept(Batch<Void> batch, long now) {
        long service = latency.serviceNanos(batch.size(), random);
        long finish = run(service, now);
        sim.events().add(new Event() {
            @Override
            void fire(long at) {
                sim.batchCompleted(batch, service, at);
            }
        }, finish + back);
    }

    /** When something sent at {@code now} and taking {@code nanos} finishes, after what was sent before. */
    private long run(long nanos, long now) {
        long start = Math.max(now + out, freeAt);
        freeAt = start + nanos;
        busyNanos += nanos;
        return freeAt;
    }
}

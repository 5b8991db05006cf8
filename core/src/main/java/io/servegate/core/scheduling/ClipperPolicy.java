package io.servegate.core.scheduling;

import io.servegate.core.batching.AimdBatchingPolicy;
import io.servegate.core.batching.FixedBatchingPolicy;

/**
 * Clipper's batching (NSDI'17, §4.3) under late binding: an idle replica takes up to its own
 * maximum batch size, set by AIMD from its latencies against the SLO (or fixed), from the
 * model's queue in deadline order. With delayed batching it waits, while the batch is not full,
 * until the oldest query has waited {@code batchWait}. Deadlines only drop what has expired.
 */
final class ClipperPolicy implements SchedulingPolicy {

    private final SchedulerConfig config;

    ClipperPolicy(SchedulerConfig config) {
        this.config = config;
    }

    @Override
    public int laneDepth() {
        return 1;
    }

    @Override
    public void added(Lane lane) {
        if (lane.replica.batching == null) {
            lane.replica.batching = config.fixedBatchSize() > 0
                    ? new FixedBatchingPolicy(config.batchCap())
                    : new AimdBatchingPolicy(config.sloNanos(), AimdBatchingPolicy.DEFAULT_INITIAL_SIZE,
                            AimdBatchingPolicy.DEFAULT_ADDITIVE_STEP, AimdBatchingPolicy.DEFAULT_BACKOFF_FACTOR,
                            config.maxBatchSize());
        }
    }

    @Override
    public void completed(Lane lane, int size, long serviceNanos) {
        lane.replica.batching.onBatchCompleted(size, serviceNanos);
    }

    @Override
    public <P> void schedule(ModelScheduler<P> s, long now) {
        while (!s.queue.isEmpty()) {
            Lane lane = s.earliestLane(1);
            if (lane == null) {
                return;
            }
            if (lane.freeAt > now) {
                s.wakeAt(lane.freeAt); // still running another scheduler's batches (busyFor)
                return;
            }
            int max = Math.max(1, lane.replica.batching.maxBatchSize());
            int queued = s.queue.size();
            long wait = config.batchWaitNanos();
            if (queued < max && wait > 0 && now - s.queue.oldestArrival() < wait) {
                s.wakeAt(s.queue.oldestArrival() + wait);
                return;
            }
            s.send(lane, Math.min(max, queued), now, now, now);
        }
    }
}

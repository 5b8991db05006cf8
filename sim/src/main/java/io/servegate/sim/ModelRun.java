package io.servegate.sim;

import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.ModelScheduler;
import io.servegate.core.scheduling.Query;
import io.servegate.core.scheduling.RejectReason;
import io.servegate.core.scheduling.SchedulerActions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One model during a run: its {@link ModelScheduler}, unchanged from the gateway's, and the
 * driver side of it. It carries the scheduler's actions out in virtual time (a batch goes to its
 * emulated replica, a timer becomes an event) and tallies what happens to each query.
 */
final class ModelRun implements SchedulerActions<Void> {

    final ModelSpec spec;
    final ModelScheduler<Void> scheduler;
    final Map<String, SimReplica> replicas = new LinkedHashMap<>();
    final ModelStats stats = new ModelStats();
    private final Simulation sim;

    ModelRun(ModelSpec spec, Simulation sim) {
        this.spec = spec;
        this.sim = sim;
        this.scheduler = new ModelScheduler<>(spec.config(), this);
    }

    void submit(long deadline, long now) {
        stats.arrived++;
        scheduler.submit(null, deadline, now);
    }

    /**
     * A replica joins as the gateway adds one: registered, profiled at sizes 1, 2, 4, … up to
     * {@code profileMax} with what its container measures, then available.
     */
    void join(SimReplica r, int profileMax, long now) {
        if (r.retiring) {
            r.left = true; // scaled down before it started
            r.diedAt = now;
            return;
        }
        String id = r.spec.id();
        replicas.put(id, r);
        scheduler.addReplica(id, r.spec.concurrency(), now);
        for (int b = 1; b <= profileMax; b *= 2) {
            long service = r.sample(b);
            scheduler.profileSample(id, b, service, service + r.spec.overheadNanos(), now);
        }
        scheduler.setAvailable(id, true, now);
    }

    /**
     * A replica is scaled down: it takes no new batch and leaves once its last one has answered
     * (at once when it is idle or still starting).
     */
    void retire(SimReplica r, long now) {
        r.retiring = true;
        if (replicas.containsKey(r.spec.id())) {
            scheduler.setAvailable(r.spec.id(), false, now);
            if (r.inFlight.isEmpty()) {
                leave(r, now);
            }
        }
    }

    /** A drained replica leaves. */
    void leave(SimReplica r, long now) {
        r.alive = false;
        r.left = true;
        r.diedAt = now;
        scheduler.removeReplica(r.spec.id(), now);
    }

    /** A replica dies: the scheduler loses it and its outstanding batches fail, as in the gateway. */
    void fail(SimReplica r, long now) {
        List<Batch<Void>> lost = r.die(now);
        scheduler.removeReplica(r.spec.id(), now);
        for (Batch<Void> b : lost) {
            stats.failed += scheduler.batchFailed(b, b.queries(), now).size();
        }
    }

    void completed(Batch<Void> batch, long serviceNanos, long now) {
        for (Query<Void> q : batch.queries()) {
            stats.answered(now - q.arrival(), now <= q.deadline());
        }
        scheduler.batchCompleted(batch, serviceNanos, now);
    }

    @Override
    public void send(Batch<Void> batch) {
        stats.batch(batch.size());
        replicas.get(batch.replica()).accept(batch, sim.now(), sim.events());
    }

    @Override
    public void reject(Query<Void> query, RejectReason reason) {
        stats.defaults[reason.ordinal()]++;
    }

    @Override
    public void wakeAt(long nanos) {
        sim.events().add(new Timer(), Math.max(nanos, sim.now()));
    }

    private final class Timer extends Event {
        @Override
        void fire(long now) {
            scheduler.timer(now);
        }
    }
}

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
final class ModelRun implements SchedulerActions<Object> {

    final ModelSpec spec;
    final ModelScheduler<Object> scheduler;
    final Map<String, SimReplica> replicas = new LinkedHashMap<>();
    final ModelStats stats = new ModelStats();
    private final Simulation sim;
    private final QueryRouter router;

    ModelRun(ModelSpec spec, Simulation sim, QueryRouter router) {
        this.spec = spec;
        this.sim = sim;
        this.router = router;
        this.scheduler = new ModelScheduler<>(spec.name(), spec.config(), this);
    }

    /** A query arrives carrying {@code payload}, which the router gets back when it leaves. */
    void submit(Object payload, long deadline, long now) {
        stats.arrived++;
        scheduler.submit(spec.name(), payload, deadline, now);
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
            scheduler.profileSample(id, spec.name(), b, service, service + r.spec.overheadNanos(), now);
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
        List<Batch<Object>> lost = r.die(now);
        scheduler.removeReplica(r.spec.id(), now);
        for (Batch<Object> b : lost) {
            for (Query<Object> q : scheduler.batchFailed(b, b.queries(), now)) {
                stats.failed++;
                router.dropped(this, q.payload(), now);
            }
        }
    }

    void completed(Batch<Object> batch, long serviceNanos, long now) {
        for (Query<Object> q : batch.queries()) {
            stats.answered(now - q.arrival(), now <= q.deadline());
        }
        scheduler.batchCompleted(batch, serviceNanos, now);
        for (Query<Object> q : batch.queries()) {
            router.answered(this, q.payload(), now);
        }
    }

    @Override
    public void send(Batch<Object> batch) {
        stats.batch(batch.size());
        replicas.get(batch.replica()).accept(batch, sim.now(), sim.events());
    }

    @Override
    public void reject(Query<Object> query, RejectReason reason) {
        stats.defaults[reason.ordinal()]++;
        router.dropped(this, query.payload(), sim.now());
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

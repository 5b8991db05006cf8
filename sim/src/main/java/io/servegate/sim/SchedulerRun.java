package io.servegate.sim;

import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.Load;
import io.servegate.core.scheduling.Query;
import io.servegate.core.scheduling.RejectReason;
import io.servegate.core.scheduling.Scheduler;
import io.servegate.core.scheduling.SchedulerActions;
import io.servegate.core.scheduling.Tenant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * One scheduler during a run: the core's {@link Scheduler}, unchanged from the gateway's, and the
 * driver side of it. It carries the scheduler's actions out in virtual time (a batch or a load goes
 * to its emulated replica, a timer becomes an event) and tallies what happens to each query of the
 * models it serves: one model for a {@link io.servegate.core.scheduling.ModelScheduler}, many for a
 * {@link io.servegate.core.scheduling.MultiModelScheduler}. A scenario's lead-in runs untallied:
 * a query counts if it arrived after it, a batch if it was sent after it.
 *
 * @param <S> the scheduler
 */
final class SchedulerRun<S extends Scheduler<Object>> implements SchedulerActions<Object> {

    /** How a replica joins the scheduler, which differs by scheduler: what it is told before the replica is available. */
    @FunctionalInterface
    interface Registration<S> {
        void join(S scheduler, SimReplica replica, long now);
    }

    final String name;
    final S scheduler;
    final Map<String, SimReplica> replicas = new LinkedHashMap<>();
    final ModelStats stats = new ModelStats();
    /** The models it serves, with their load times. */
    private final Map<String, Long> loadNanos = new HashMap<>();
    private final Registration<S> registration;
    private final Simulation sim;
    private final QueryRouter router;

    SchedulerRun(String name, Function<SchedulerActions<Object>, S> scheduler, Registration<S> registration,
            Simulation sim, QueryRouter router) {
        this.name = name;
        this.registration = registration;
        this.sim = sim;
        this.router = router;
        this.scheduler = scheduler.apply(this);
    }

    /** The scheduler serves {@code model}, which a replica loads in {@code loadNanos}. */
    SchedulerRun<S> serves(String model, long loadNanos) {
        this.loadNanos.put(model, loadNanos);
        return this;
    }

    /**
     * A query for {@code model} arrives carrying {@code payload}, which the router gets back when
     * it leaves. A model the scheduler does not serve is placed nowhere: its default is answered at
     * once, as a gateway answers it.
     */
    void submit(String model, Object payload, long deadline, long now) {
        submit(model, payload, deadline, Tenant.DEFAULT, now);
    }

    /** As {@link #submit(String, Object, long, long)}, for {@code tenant}'s app. */
    void submit(String model, Object payload, long deadline, Tenant tenant, long now) {
        boolean measured = sim.measured(now);
        if (measured) {
            stats.arrived++;
        }
        if (loadNanos.containsKey(model)) {
            scheduler.submit(model, payload, deadline, tenant, now);
        } else {
            if (measured) {
                stats.defaults[RejectReason.NO_REPLICA.ordinal()]++;
            }
            router.dropped(this, payload, now);
        }
    }

    /** A replica joins as the gateway adds one: registered (and profiled), then available. */
    void join(SimReplica r, long now) {
        if (r.retiring) {
            r.left = true; // scaled down before it started
            r.diedAt = now;
            return;
        }
        String id = r.spec.id();
        replicas.put(id, r);
        registration.join(scheduler, r, now);
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

    /** A replica dies: the scheduler loses it and its outstanding batches and loads fail, as in the gateway. */
    void fail(SimReplica r, long now) {
        List<Object> lost = r.die(now);
        scheduler.removeReplica(r.spec.id(), now);
        for (Object action : lost) {
            if (action instanceof Load load) {
                scheduler.loadFailed(load, now);
                continue;
            }
            Batch<Object> b = batch(action);
            for (Query<Object> q : scheduler.batchFailed(b, b.queries(), now)) {
                if (sim.measured(q.arrival())) {
                    stats.failed++;
                }
                router.dropped(this, q.payload(), now);
            }
        }
    }

    /** A replica answered a batch or a load that took it {@code nanos}. */
    void answered(Object action, long nanos, long now) {
        if (action instanceof Load load) {
            scheduler.loadCompleted(load, nanos, now);
            return;
        }
        Batch<Object> batch = batch(action);
        for (Query<Object> q : batch.queries()) {
            if (sim.measured(q.arrival())) {
                stats.answered(now - q.arrival(), now <= q.deadline());
            }
        }
        scheduler.batchCompleted(batch, nanos, now);
        for (Query<Object> q : batch.queries()) {
            router.served(q.payload(), nanos / batch.size());
            router.answered(this, q.payload(), now);
        }
    }

    @SuppressWarnings("unchecked")
    private static Batch<Object> batch(Object action) {
        return (Batch<Object>) action;
    }

    @Override
    public void send(Batch<Object> batch) {
        if (sim.measured(sim.now())) {
            stats.batch(batch.size());
        }
        replicas.get(batch.replica()).accept(batch, sim.now(), sim.events());
    }

    @Override
    public void load(Load load) {
        replicas.get(load.replica()).accept(load, loadNanos.get(load.model()), sim.now(), sim.events());
    }

    @Override
    public void unload(String replica, String model) {
        // takes no replica time; the scheduler has freed the model's memory already
    }

    @Override
    public void reject(Query<Object> query, RejectReason reason) {
        if (sim.measured(query.arrival())) {
            stats.defaults[reason.ordinal()]++;
        }
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

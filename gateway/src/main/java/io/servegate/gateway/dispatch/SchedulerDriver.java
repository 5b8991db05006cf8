package io.servegate.gateway.dispatch;

import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.Load;
import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.scheduling.Query;
import io.servegate.core.scheduling.RejectReason;
import io.servegate.core.scheduling.Scheduler;
import io.servegate.core.scheduling.SchedulerActions;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.tracing.QueryTrace;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.function.ObjLongConsumer;

/**
 * Carries out one core {@link Scheduler}: a model version's own, or a pool's of multi-model
 * replicas. Events (a query, a replica's news, a timer) reach the scheduler under this object's
 * lock; the actions it takes are recorded there and carried out once the lock is released (a
 * default answered, a timer armed, its {@link DispatchListener}s told), so no I/O and no caller's
 * callback ever runs under the lock. Batches, loads and unloads are handed to their replica's
 * {@link ReplicaWorker} under the lock, in the order the scheduler decided, behind a gate that
 * opens once the lock is released: no replica call starts before.
 *
 * @param <S> the scheduler
 */
final class SchedulerDriver<S extends Scheduler<PendingPrediction>>
        implements SchedulerActions<PendingPrediction>, AutoCloseable {

    private final String name;
    private final PolicyKind policy;
    private final S scheduler;
    private final LongSupplier clock;
    private final reactor.core.scheduler.Scheduler timers;
    private final List<DispatchListener> listeners = new CopyOnWriteArrayList<>();
    /** The model versions it serves, by the scheduler's name for them. */
    private final Map<String, PlacedModel> models = new ConcurrentHashMap<>();
    /** Copy-on-write: the request path reads without locks. */
    private volatile Map<String, ReplicaWorker> workers = Map.of();
    /** Actions the scheduler took during the current event; guarded by {@code this}. */
    private List<Runnable> actions = new ArrayList<>();
    /** Opened once the current event's lock is released; null until a replica call waits on it. Guarded by {@code this}. */
    private CompletableFuture<Void> gate;

    /**
     * @param name      what it schedules, as a default's explanation names it ({@code model NAME:VERSION},
     *                  {@code pool NAME})
     * @param policy    the scheduler's policy, as its batches' traces name it
     * @param scheduler makes the scheduler, which acts through the driver
     */
    SchedulerDriver(String name, PolicyKind policy, Function<SchedulerActions<PendingPrediction>, S> scheduler,
            LongSupplier clock, reactor.core.scheduler.Scheduler timers) {
        this.name = name;
        this.policy = policy;
        this.clock = clock;
        this.timers = timers;
        this.scheduler = scheduler.apply(this);
    }

    /** Tells {@code listener} what happens from now on; closing the driver closes it. */
    SchedulerDriver<S> listen(DispatchListener listener) {
        listeners.add(listener);
        return this;
    }

    LongSupplier clock() {
        return clock;
    }

    PolicyKind policy() {
        return policy;
    }

    // ---- what it serves ----

    /** Serves {@code model}; serving it again keeps the first description. */
    void serve(PlacedModel model) {
        models.putIfAbsent(model.key(), model);
    }

    Collection<PlacedModel> models() {
        return models.values();
    }

    /** Whether it serves the model version the scheduler calls {@code key}. */
    boolean serves(String key) {
        return models.containsKey(key);
    }

    /** Adds a replica's worker, then registers the replica with the scheduler through {@code register}. */
    void add(ReplicaWorker worker, ObjLongConsumer<S> register) {
        synchronized (this) {
            Map<String, ReplicaWorker> next = new HashMap<>(workers);
            next.put(worker.id(), worker);
            workers = Map.copyOf(next);
        }
        event(now -> {
            register.accept(scheduler, now);
            listeners.forEach(l -> actions.add(() -> l.replicaAdded(worker.id(), now)));
        });
    }

    /** Removes a replica's worker and the replica; what was sent to it is the worker's to fail. */
    void remove(ReplicaWorker worker) {
        synchronized (this) {
            Map<String, ReplicaWorker> next = new HashMap<>(workers);
            next.remove(worker.id(), worker);
            workers = Map.copyOf(next);
        }
        event(now -> {
            scheduler.removeReplica(worker.id(), now);
            listeners.forEach(l -> actions.add(() -> l.replicaRemoved(worker.id(), now)));
        });
    }

    Collection<ReplicaWorker> workers() {
        return workers.values();
    }

    /** Whether a replica takes queries now (for a pool: whatever models it holds). */
    boolean ready() {
        for (ReplicaWorker w : workers.values()) {
            if (w.available()) {
                return true;
            }
        }
        return false;
    }

    // ---- events ----

    /**
     * Schedules a query of {@code model} for {@code tenant}'s app; the future completes with the
     * output or fails with a {@link DispatchException}.
     */
    CompletableFuture<String> submit(String model, Object input, long deadline, Tenant tenant) {
        // the query's trace, when its request is traced: a thread-local read when tracing is off
        QueryTrace trace = QueryTrace.current();
        if (trace != null) {
            trace.queued();
        }
        PendingPrediction p = new PendingPrediction(input, trace);
        event(now -> {
            scheduler.submit(model, p, deadline, tenant, now);
            listeners.forEach(l -> actions.add(() -> l.arrived(now, deadline)));
        });
        return p.result;
    }

    /** An event of the scheduler's own kind (a model placed, a batch cap changed). */
    void event(ObjLongConsumer<S> event) {
        event(now -> event.accept(scheduler, now));
    }

    /** Whether a replica takes batches, as {@code available} says when the scheduler takes the event. */
    void availability(String replica, BooleanSupplier available) {
        event(now -> scheduler.setAvailable(replica, available.getAsBoolean(), now));
    }

    /**
     * A replica is ready: of the models it holds already, those served here and fitting count as
     * loaded; then it takes batches if {@code available} says so.
     */
    void ready(String replica, Collection<String> held, BooleanSupplier available) {
        event(now -> {
            for (String model : held) {
                if (serves(model)) {
                    try {
                        scheduler.preloaded(replica, model, now);
                    } catch (IllegalArgumentException full) {
                        // over the budget the scheduler plans with: it loads what it needs, the container evicts
                    }
                }
            }
            scheduler.setAvailable(replica, available.getAsBoolean(), now);
        });
    }

    void profileSample(String replica, String model, int size, long serviceNanos, long roundTripNanos) {
        event(now -> scheduler.profileSample(replica, model, size, serviceNanos, roundTripNanos, now));
    }

    void completed(Batch<PendingPrediction> batch, long serviceNanos) {
        event(now -> {
            listeners.forEach(l -> actions.add(() -> l.completed(batch, serviceNanos, now)));
            scheduler.batchCompleted(batch, serviceNanos, now);
        });
    }

    /**
     * A batch returned whose time is no latency sample (the container isolated rejected rows,
     * or the batch was split): its queries are answered, its replica is free, nothing is learned.
     */
    void returnedUnmeasured(Batch<PendingPrediction> batch) {
        event(now -> scheduler.batchFailed(batch, List.of(), now));
    }

    /**
     * A batch failed, or part of it: the queries of {@code retry} go back to the queue if they may,
     * the others of them fail with {@code error}.
     */
    void failed(Batch<PendingPrediction> batch, Collection<Query<PendingPrediction>> retry, DispatchException error) {
        event(now -> {
            for (Query<PendingPrediction> q : scheduler.batchFailed(batch, retry, now)) {
                actions.add(() -> q.payload().result.completeExceptionally(error));
            }
        });
    }

    void loadCompleted(Load load, long tookNanos) {
        event(now -> {
            listeners.forEach(l -> actions.add(() -> l.loaded(tookNanos)));
            scheduler.loadCompleted(load, tookNanos, now);
        });
    }

    void loadFailed(Load load) {
        event(now -> scheduler.loadFailed(load, now));
    }

    // ---- actions (called by the scheduler, under the lock) ----

    @Override
    public void send(Batch<PendingPrediction> batch) {
        listeners.forEach(l -> actions.add(() -> l.sent(batch)));
        ReplicaWorker worker = workers.get(batch.replica());
        if (worker == null) {
            actions.add(() -> failed(batch, batch.queries(), new DispatchException(DispatchFailure.NO_REPLICA,
                    "replica " + batch.replica() + " was removed")));
        } else {
            worker.send(batch, models.get(batch.model()), gate());
        }
    }

    @Override
    public void load(Load load) {
        ReplicaWorker worker = workers.get(load.replica());
        if (worker == null) {
            actions.add(() -> loadFailed(load));
        } else {
            worker.load(load, models.get(load.model()), gate());
        }
    }

    @Override
    public void unload(String replica, String model) {
        ReplicaWorker worker = workers.get(replica);
        if (worker != null) {
            worker.unload(models.get(model), gate());
        }
    }

    @Override
    public void reject(Query<PendingPrediction> query, RejectReason reason) {
        actions.add(() -> {
            if (query.payload().trace != null) {
                query.payload().trace.rejected(reason.name() + " (" + name + ")");
            }
            query.payload().result.completeExceptionally(new DispatchException(DispatchFailure.of(reason), name));
        });
    }

    @Override
    public void wakeAt(long nanos) {
        // every request gets its timer: the scheduler asks only when its next wake-up moves
        // earlier or the last one came due, and a timer that fires early is harmless
        actions.add(() -> timers.schedule(() -> event(scheduler::timer),
                Math.max(0, nanos - clock.getAsLong()), TimeUnit.NANOSECONDS));
    }

    private CompletableFuture<Void> gate() {
        if (gate == null) {
            gate = new CompletableFuture<>();
        }
        return gate;
    }

    private void event(LongConsumer event) {
        List<Runnable> todo;
        CompletableFuture<Void> opened;
        synchronized (this) {
            event.accept(clock.getAsLong());
            opened = gate;
            gate = null;
            if (actions.isEmpty()) {
                todo = List.of();
            } else {
                todo = actions;
                actions = new ArrayList<>();
            }
        }
        if (opened != null) {
            opened.complete(null);
        }
        for (Runnable action : todo) {
            action.run();
        }
    }

    // ---- reads, for metrics and the admin API ----

    synchronized <T> T read(Function<S, T> reader) {
        return reader.apply(scheduler);
    }

    /** Closes its workers and listeners. */
    @Override
    public void close() {
        Collection<ReplicaWorker> closing;
        synchronized (this) {
            closing = workers.values();
            workers = Map.of();
        }
        closing.forEach(ReplicaWorker::close);
        listeners.forEach(DispatchListener::close);
    }
}

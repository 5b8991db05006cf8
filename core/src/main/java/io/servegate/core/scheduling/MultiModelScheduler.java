package io.servegate.core.scheduling;

import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The {@link Scheduler} of many model versions that share multi-model replicas (Clockwork,
 * OSDI'20, §4.5, §5.3): each replica holds the models that fit its memory budget and runs one
 * thing at a time, a LOAD of a model or an INFER batch of a model it holds, so a replica busy with
 * model A is busy for model B. The scheduler owns every model's queue, decides which models each
 * replica holds, and binds queries to a replica only when it sends their batch; its
 * {@link MultiModelPlanner} decides what goes where, Clockwork's way, counting the load where a
 * replica does not hold the batch's model.
 *
 * <p><b>Eviction</b>, a simpler rule than Clockwork's load priority: room is made by evicting the
 * least recently used models (used = a batch sent, or loaded) that have no load or batch
 * outstanding on that replica; a model that cannot be made room for waits for another replica or
 * its deadline.
 *
 * <p>Models join with {@link #addModel}, replicas with {@link #addReplica} (and what they hold
 * already with {@link #preloaded}). The rest is {@link Scheduler}'s, loads included.
 *
 * @param <P> what the caller keeps with each query
 */
public final class MultiModelScheduler<P> extends AbstractScheduler<P> {

    private final SchedulerConfig config;
    private final MultiModelPlanner<P> planner;
    private final Map<String, ServedModel<P>> models = new LinkedHashMap<>();
    final Map<String, SharedReplica> replicas = new LinkedHashMap<>();
    /** Every replica by the lane its batches name; a removed one until what was sent to it has returned. */
    private final Map<Lane, SharedReplica> byLane = new IdentityHashMap<>();
    /** Every replica's and model's transport overheads together; only {@link ReplicaProfile#overheadNanos} is read. */
    private final ReplicaProfile transport;
    /** Models with queued queries. */
    final Set<ServedModel<P>> waiting = new LinkedHashSet<>();
    /**
     * Models held nowhere whose queries were answered with the default because no replica could
     * load them in time, {@link MultiModelPlanner#LOAD_AFTER_DROPS} or more lately, least recently
     * so first: each is loaded where a replica has nothing else to do.
     */
    final Set<ServedModel<P>> unloaded = new LinkedHashSet<>();

    private long coldStarts;
    private long loads;
    private long evictions;
    private long loadNanos;

    /**
     * @param config batch cap, queue capacity (per model), attempts, profile window and safety
     *               margin as for a {@link ModelScheduler}; its policy must be
     *               {@link PolicyKind#CLOCKWORK}, the one this scheduler plans with
     */
    public MultiModelScheduler(SchedulerConfig config, SchedulerActions<P> actions) {
        super(actions);
        this.config = Objects.requireNonNull(config, "config");
        if (config.policy() != PolicyKind.CLOCKWORK) {
            throw new IllegalArgumentException("multi-model replicas are scheduled as clockwork does, not "
                    + config.policy().id());
        }
        this.transport = newProfile();
        this.planner = new MultiModelPlanner<>(this, config);
    }

    // ---- registration ----

    /**
     * A model version that replicas can hold: {@code sizeBytes} of a replica's memory budget, and
     * {@code loadNanos} to load (from its profile). Registering a known model again does nothing.
     */
    public void addModel(String id, long sizeBytes, long loadNanos) {
        if (sizeBytes < 0 || loadNanos < 0) {
            throw new IllegalArgumentException("model " + id + ": size and load time must be >= 0");
        }
        models.putIfAbsent(id, new ServedModel<>(id, sizeBytes, loadNanos, newProfile()));
    }

    /**
     * A measured batch of {@code model} outside live traffic (its profiling pass): seeds the
     * profile the scheduler plans its batches with. Without one, the model's batches are of one
     * query and predicted to take no time until the first returns.
     */
    public void profileSample(String model, int batchSize, long serviceNanos, long roundTripNanos, long now) {
        ServedModel<P> m = model(model);
        if (batchSize >= 1 && serviceNanos > 0) {
            long overhead = Math.max(0, roundTripNanos - serviceNanos);
            m.profile.record(batchSize, serviceNanos, overhead, now);
            transport.record(batchSize, serviceNanos, overhead, now);
        }
    }

    /**
     * A measured batch of {@code model} on {@code replica} outside live traffic (the replica's
     * warm-up): as {@link #profileSample(String, int, long, long, long)}, and it also gives the
     * replica its own transport overhead, so that its first live batch is planned with one measured
     * after the one-off costs of a cold gateway and container, not with those costs.
     */
    @Override
    public void profileSample(String replica, String model, int batchSize, long serviceNanos, long roundTripNanos,
            long now) {
        profileSample(model, batchSize, serviceNanos, roundTripNanos, now);
        SharedReplica r = replicas.get(replica);
        if (r != null && batchSize >= 1 && serviceNanos > 0) {
            r.replica.profile.record(batchSize, serviceNanos, Math.max(0, roundTripNanos - serviceNanos), now);
        }
    }

    /**
     * A replica joins with a memory budget of {@code budgetBytes}, holding nothing and unavailable
     * until {@link #setAvailable}. Adding a known replica again does nothing.
     */
    public void addReplica(String id, long budgetBytes, long now) {
        if (budgetBytes < 0) {
            throw new IllegalArgumentException("replica " + id + ": budget must be >= 0");
        }
        if (!replicas.containsKey(id)) {
            SharedReplica r = new SharedReplica(new Replica(id, 1, newProfile(), now), budgetBytes, transport);
            replicas.put(id, r);
            byLane.put(r.lane, r);
        }
    }

    /**
     * The replica holds {@code model} already (it was loaded before the replica registered), with
     * no load to send.
     *
     * @throws IllegalArgumentException for an unknown replica or model, or one that does not fit
     */
    @Override
    public void preloaded(String replica, String model, long now) {
        SharedReplica r = replicas.get(replica);
        ServedModel<P> m = model(model);
        if (r == null) {
            throw new IllegalArgumentException("unknown replica " + replica);
        }
        if (!r.holds(model) && r.usedBytes + m.sizeBytes > r.budgetBytes) {
            throw new IllegalArgumentException("model " + model + " does not fit replica " + replica
                    + "'s remaining budget");
        }
        r.hold(m);
        run(now);
    }

    @Override
    public void removeReplica(String id, long now) {
        SharedReplica r = replicas.remove(id);
        if (r != null) {
            r.removed = true;
            r.replica.available = false;
            forgetIfDone(r);
            run(now);
        }
    }

    @Override
    public void setAvailable(String id, boolean available, long now) {
        SharedReplica r = replicas.get(id);
        if (r != null && r.replica.available != available) {
            r.replica.available = available;
            run(now);
        }
    }

    // ---- events ----

    /**
     * A query for {@code model} arrives. It is rejected at once when no available replica's budget
     * could hold the model ({@link RejectReason#NO_REPLICA}), its queue is full
     * ({@link RejectReason#OVERLOADED}), no replica could answer it in time
     * ({@link RejectReason#INFEASIBLE}), or a higher tier queued on the replicas that hold the
     * model leaves it no time ({@link RejectReason#SHED}, {@link MultiModelPlanner#admits}). It is
     * a cold start when no replica holds the model.
     *
     * @throws IllegalArgumentException for a model never {@link #addModel added}
     */
    @Override
    public Query<P> submit(String model, P payload, long deadline, Tenant tenant, long now) {
        ServedModel<P> m = model(model);
        Query<P> q = arrive(payload, deadline, tenant, now);
        if (!heldAnywhere(m)) {
            coldStarts++;
        }
        if (!fitsAnyAvailable(m)) {
            reject(q, RejectReason.NO_REPLICA);
        } else if (m.queue.size() >= config.queueCapacity()) {
            reject(q, RejectReason.OVERLOADED);
        } else if (!planner.admits(m, q, now)) {
            reject(q, RejectReason.SHED);
        } else {
            m.queue.add(q);
            waiting.add(m);
            run(now);
        }
        return q;
    }

    @Override
    public void batchCompleted(Batch<P> batch, long serviceNanos, long now) {
        SharedReplica r = byLane.get(batch.lane());
        if (r == null || !r.returned(batch, now)) {
            return; // stale or duplicate
        }
        forgetIfDone(r);
        long service = serviceNanos(batch, serviceNanos, now);
        long overhead = overheadNanos(batch, serviceNanos, now);
        ServedModel<P> m = models.get(batch.model());
        m.profile.record(batch.size(), service, overhead, now);
        r.replica.profile.record(batch.size(), service, overhead, now);
        transport.record(batch.size(), service, overhead, now);
        r.replica.busy(service, now);
        run(now);
    }

    @Override
    public List<Query<P>> batchFailed(Batch<P> batch, Collection<Query<P>> retry, long now) {
        SharedReplica r = byLane.get(batch.lane());
        if (r == null || !r.returned(batch, now)) {
            return List.of();
        }
        forgetIfDone(r);
        ServedModel<P> m = models.get(batch.model());
        List<Query<P>> failed = new ArrayList<>();
        for (Query<P> q : retry) {
            if (mayRetry(q, now) && fitsAnyAvailable(m)) {
                m.queue.add(q);
                waiting.add(m);
            } else {
                failed.add(q);
            }
        }
        run(now);
        return failed;
    }

    @Override
    public void loadCompleted(Load load, long measuredNanos, long now) {
        SharedReplica r = load.target;
        if (!r.returned(load, now)) {
            return;
        }
        forgetIfDone(r);
        long took = measuredNanos > 0 ? measuredNanos : Math.max(0, now - load.sentAt());
        loadNanos += took;
        r.replica.busy(took, now);
        run(now);
    }

    /** The batches sent after the load for that model will fail, and the driver reports them through {@link #batchFailed}. */
    @Override
    public void loadFailed(Load load, long now) {
        SharedReplica r = load.target;
        if (!r.returned(load, now)) {
            return;
        }
        forgetIfDone(r);
        r.release(models.get(load.model()));
        run(now);
    }

    // ---- what the planner uses ----

    @Override
    void expire(long now) {
        for (Iterator<ServedModel<P>> it = waiting.iterator(); it.hasNext(); ) {
            ServedModel<P> m = it.next();
            expire(m.queue, now);
            if (m.queue.isEmpty()) {
                it.remove();
            }
        }
    }

    @Override
    void schedule(long now) {
        planner.schedule(now);
    }

    @Override
    long earliestDeadline() {
        long earliest = Long.MAX_VALUE;
        for (ServedModel<P> m : waiting) {
            earliest = Math.min(earliest, m.queue.peek().deadline());
        }
        return earliest;
    }

    @Override
    SchedulerConfig config() {
        return config;
    }

    /**
     * Readies {@code r} to run a batch of {@code m} from {@code start}: marks {@code m} used when
     * it is held, else evicts what must make room and sends the load.
     *
     * @return when the batch can start: {@code start}, or when the load is predicted to end
     */
    long makeReady(SharedReplica r, ServedModel<P> m, long start, long now) {
        if (r.holds(m.id)) {
            r.touch(m.id);
            return start;
        }
        for (ServedModel<?> victim : r.evictFor(m)) {
            evictions++;
            actions().unload(r.id(), victim.id);
        }
        r.hold(m);
        m.loadedAt = now;
        Load load = new Load(r, m.id, now, start, start + m.loadNanos);
        r.sent(load, m.id, now, m.loadNanos, load.predictedFinish());
        loads++;
        actions().load(load);
        return load.predictedFinish();
    }

    /** Sends {@code r} a batch of {@code size} queries of {@code m} ({@link #take}), predicted to run from {@code start} to {@code finish}. */
    void send(SharedReplica r, ServedModel<P> m, int size, long start, long finish, long now) {
        List<Query<P>> items = take(m.queue, size, finish - start, true, Long.MAX_VALUE);
        m.sent(size);
        if (m.queue.isEmpty()) {
            waiting.remove(m);
        }
        Batch<P> batch = new Batch<>(r.lane, m.id, items, now, start, finish, r.idle());
        r.sent(batch, m.id, now, finish - start, Math.max(finish, now));
        send(batch);
    }

    boolean heldAnywhere(ServedModel<P> m) {
        for (SharedReplica r : replicas.values()) {
            if (r.holds(m.id)) {
                return true;
            }
        }
        return false;
    }

    private boolean fitsAnyAvailable(ServedModel<P> m) {
        for (SharedReplica r : replicas.values()) {
            if (r.available() && r.budgetBytes >= m.sizeBytes) {
                return true;
            }
        }
        return false;
    }

    private ReplicaProfile newProfile() {
        return new ReplicaProfile(config.profileWindow(), config.profileMaxAgeNanos(), config.maxBatchSize());
    }

    /** A removed replica is forgotten once nothing sent to it is outstanding. */
    private void forgetIfDone(SharedReplica r) {
        if (r.removed && r.idle()) {
            byLane.remove(r.lane);
        }
    }

    private ServedModel<P> model(String id) {
        ServedModel<P> m = models.get(id);
        if (m == null) {
            throw new IllegalArgumentException("unknown model " + id);
        }
        return m;
    }

    // ---- metrics (plain reads) ----

    /**
     * Queries that arrived when no replica held their model (Clockwork §6.5's cold starts), whatever
     * became of them.
     */
    public long coldStarts() {
        return coldStarts;
    }

    /** Loads sent so far. */
    public long loads() {
        return loads;
    }

    /** Models unloaded to make room so far. */
    public long evictions() {
        return evictions;
    }

    /** Replica time spent loading so far (completed loads), in nanoseconds. */
    public long loadNanos() {
        return loadNanos;
    }

    @Override
    public int queued() {
        int n = 0;
        for (ServedModel<P> m : waiting) {
            n += m.queue.size();
        }
        return n;
    }

    /** The models a replica holds (loaded, or with a load sent), least recently used first; empty if unknown. */
    public List<String> heldModels(String replica) {
        SharedReplica r = replicas.get(replica);
        return r == null ? List.of() : r.heldModels();
    }

    /** Bytes of a replica's budget its held models take; 0 if unknown. */
    public long usedBytes(String replica) {
        SharedReplica r = replicas.get(replica);
        return r == null ? 0 : r.usedBytes;
    }

    @Override
    public long busyNanos(String replica) {
        SharedReplica r = replicas.get(replica);
        return r == null ? 0 : r.replica.busyNanos;
    }
}

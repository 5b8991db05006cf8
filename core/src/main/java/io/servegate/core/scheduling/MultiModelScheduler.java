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
 * The scheduler of many model versions that share multi-model replicas (Clockwork, OSDI'20, §4.5, §5.3):
 * each replica holds the models that fit its memory budget and runs one thing at a time, a LOAD
 * of a model or an INFER batch of a model it holds, so a replica busy with model A is busy for
 * model B. The scheduler owns every model's queue, decides which models each replica holds, and
 * binds queries to a replica only when it sends their batch.
 *
 * <p><b>Planning</b> is Clockwork's, across models: replicas are considered free earliest first
 * (one that can answer no waiting model in time is passed over); of the models a replica can
 * answer in time, the one whose earliest deadline comes first gets the largest batch of its
 * earliest deadlines predicted to answer before the first of them. A model the replica does
 * not hold is loaded first, and the batch is predicted to start when the load ends (load time from
 * the model's footprint, then service time from its profile). Queries that no replica could answer
 * in time even alone, counting the load where their model is not held, are answered with the
 * default at once ({@link RejectReason#INFEASIBLE}).
 *
 * <p><b>Loading and eviction</b>, a simpler rule than Clockwork's load priority: a model is loaded
 * onto a replica only when its earliest query can be answered in time there and no replica that
 * already holds it could answer that query in time; a second copy thus appears when the first
 * cannot keep up. Room is made by evicting the least recently used models (used = a batch sent, or
 * loaded) that have no load or batch outstanding on that replica; a model that cannot be made room
 * for waits for another replica or its deadline.
 *
 * <p>Time is passed in with every event; it reads no clock, starts no thread and does no I/O.
 * <b>Not thread-safe</b>: a driver serialises its events. Guarantees as {@link ModelScheduler}'s:
 * every submitted query leaves exactly once, in one batch that completes, one rejection, or the
 * list {@link #batchFailed} returns; nothing waits past its deadline.
 *
 * @param <P> what the caller keeps with each query
 */
public final class MultiModelScheduler<P> {

    private final SchedulerConfig config;
    private final SchedulerActions<P> actions;
    private final Map<String, ServedModel<P>> models = new LinkedHashMap<>();
    private final Map<String, SharedReplica> replicas = new LinkedHashMap<>();
    /** Every replica by the lane its batches name; a removed one until what was sent to it has returned. */
    private final Map<Lane, SharedReplica> byLane = new IdentityHashMap<>();
    /** Every replica's and model's transport overheads together; only {@link ReplicaProfile#overheadNanos} is read. */
    private final ReplicaProfile transport;
    /** Models with queued queries. */
    private final Set<ServedModel<P>> waiting = new LinkedHashSet<>();
    private long armedAt = Long.MAX_VALUE;
    private long policyWake = Long.MAX_VALUE;

    private long arrived;
    private long coldStarts;
    private long sentQueries;
    private long sentBatches;
    private long loads;
    private long evictions;
    private long loadNanos;
    private final long[] rejected = new long[RejectReason.values().length];

    /**
     * @param config batch cap, queue capacity (per model), attempts, profile window and safety
     *               margin as for a {@link ModelScheduler}; its policy must be
     *               {@link PolicyKind#CLOCKWORK}, the one this scheduler plans with
     */
    public MultiModelScheduler(SchedulerConfig config, SchedulerActions<P> actions) {
        this.config = Objects.requireNonNull(config, "config");
        this.actions = Objects.requireNonNull(actions, "actions");
        if (config.policy() != PolicyKind.CLOCKWORK) {
            throw new IllegalArgumentException("multi-model replicas are scheduled as clockwork does, not "
                    + config.policy().id());
        }
        this.transport = newProfile();
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
     * after the one-off costs of a cold gateway and container, not with those costs. An unknown
     * replica is ignored.
     */
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

    /** A replica leaves; its outstanding loads and batches are the driver's to fail. */
    public void removeReplica(String id, long now) {
        SharedReplica r = replicas.remove(id);
        if (r != null) {
            r.removed = true;
            r.replica.available = false;
            forgetIfDone(r);
            run(now);
        }
    }

    /** Whether a replica takes loads and batches. */
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
     * ({@link RejectReason#OVERLOADED}) or no replica could answer it in time
     * ({@link RejectReason#INFEASIBLE}). It is a cold start when no replica holds the model.
     *
     * @throws IllegalArgumentException for a model never {@link #addModel added}
     */
    public Query<P> submit(String model, P payload, long deadline, long now) {
        ServedModel<P> m = model(model);
        Query<P> q = new Query<>(payload, now, deadline);
        arrived++;
        if (!heldAnywhere(m)) {
            coldStarts++;
        }
        if (!fitsAnyAvailable(m)) {
            reject(q, RejectReason.NO_REPLICA);
        } else if (m.queue.size() >= config.queueCapacity()) {
            reject(q, RejectReason.OVERLOADED);
        } else {
            m.queue.add(q);
            waiting.add(m);
            run(now);
        }
        return q;
    }

    /**
     * A batch returned.
     *
     * @param serviceNanos the container's own time for it, or {@code <= 0} when it reports none
     *                     (the round trip is used instead)
     */
    public void batchCompleted(Batch<P> batch, long serviceNanos, long now) {
        SharedReplica r = byLane.get(batch.lane());
        if (r == null || !r.returned(batch, now)) {
            return; // stale or duplicate
        }
        forgetIfDone(r);
        long roundTrip = Math.max(0, now - batch.sentAt());
        long service = serviceNanos > 0 ? serviceNanos : roundTrip;
        long overhead = batch.sentToIdle() && serviceNanos > 0 ? Math.max(0, roundTrip - serviceNanos) : -1;
        ServedModel<P> m = models.get(batch.model());
        m.profile.record(batch.size(), service, overhead, now);
        r.replica.profile.record(batch.size(), service, overhead, now);
        transport.record(batch.size(), service, overhead, now);
        r.replica.busy(service, now);
        run(now);
    }

    /**
     * A batch failed, or part of it; as {@link ModelScheduler#batchFailed}: each query of
     * {@code retry} with attempts left and time before its deadline goes back to its model's
     * queue, the others are returned for the caller to fail.
     */
    public List<Query<P>> batchFailed(Batch<P> batch, Collection<Query<P>> retry, long now) {
        SharedReplica r = byLane.get(batch.lane());
        if (r == null || !r.returned(batch, now)) {
            return List.of();
        }
        forgetIfDone(r);
        ServedModel<P> m = models.get(batch.model());
        List<Query<P>> failed = new ArrayList<>();
        for (Query<P> q : retry) {
            if (q.attempts < config.maxAttempts() && q.deadline() > now && fitsAnyAvailable(m)) {
                m.queue.add(q);
                waiting.add(m);
            } else {
                failed.add(q);
            }
        }
        run(now);
        return failed;
    }

    /**
     * A load finished.
     *
     * @param measuredNanos how long the replica took, or {@code <= 0} when it reports nothing (the
     *                      time since it was sent is counted instead)
     */
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

    /**
     * A load failed: the replica does not hold the model (the batches sent after it for that
     * model will fail, and the driver reports them through {@link #batchFailed}).
     */
    public void loadFailed(Load load, long now) {
        SharedReplica r = load.target;
        if (!r.returned(load, now)) {
            return;
        }
        forgetIfDone(r);
        r.release(models.get(load.model()));
        run(now);
    }

    /** A wake-up requested through {@link SchedulerActions#wakeAt} is due (or any time: harmless). */
    public void timer(long now) {
        if (armedAt <= now) {
            armedAt = Long.MAX_VALUE;
        }
        run(now);
    }

    // ---- planning ----

    /** Re-evaluates after an event: expired queries leave, batches and loads go out, the next wake-up is asked for. */
    private void run(long now) {
        for (Iterator<ServedModel<P>> it = waiting.iterator(); it.hasNext(); ) {
            ServedModel<P> m = it.next();
            Query<P> head;
            while ((head = m.queue.peek()) != null && head.deadline() <= now) {
                reject(m.queue.poll(), RejectReason.DEADLINE);
            }
            if (m.queue.isEmpty()) {
                it.remove();
            }
        }
        policyWake = Long.MAX_VALUE;
        schedule(now);
        long next = policyWake;
        for (ServedModel<P> m : waiting) {
            next = Math.min(next, m.queue.peek().deadline());
        }
        if (next != Long.MAX_VALUE && (next < armedAt || armedAt <= now)) {
            armedAt = next;
            actions.wakeAt(next);
        }
    }

    private void schedule(long now) {
        while (!waiting.isEmpty()) {
            rejectUnanswerable(now);
            boolean sent = false;
            for (SharedReplica r : byFreeTime()) {
                long overhead = r.overheadNanos();
                if (r.outstandingBatches() > 0 && now < r.freeAt() - overhead) {
                    policyWake = Math.min(policyWake, r.freeAt() - overhead); // sent ahead by the overhead, not sooner
                    continue;
                }
                if (sendTo(r, now)) {
                    sent = true;
                    break;
                }
            }
            if (!sent) {
                return;
            }
        }
    }

    /**
     * Sends {@code r} its next batch, after a load when it does not hold the batch's model: of the
     * models it can answer in time, the one whose earliest deadline comes first. A model it could
     * answer in time only as a {@link #probeAnswer probe} gets a batch of one, planned without the
     * estimates too old to trust. False when none.
     */
    private boolean sendTo(SharedReplica r, long now) {
        ServedModel<P> best = null;
        boolean bestProbes = false;
        for (ServedModel<P> m : waiting) {
            Query<P> head = m.queue.peek();
            if (!r.holds(m.id) && (!r.canMakeRoom(m) || heldInTimeElsewhere(m, r, head.deadline(), now))) {
                continue;
            }
            boolean probes = head.deadline() < earliestAnswer(m, r, now);
            if (probes && head.deadline() < probeAnswer(m, r, now)) {
                continue;
            }
            if (best == null || head.deadline() < best.queue.peek().deadline()) {
                best = m;
                bestProbes = probes;
            }
        }
        if (best == null) {
            return false;
        }
        if (bestProbes) {
            r.probedAt = now;
        }
        long overhead = bestProbes && !r.overheadFresh(now) ? 0 : r.overheadNanos();
        boolean planService = best.profile.known() && !(bestProbes && !best.profile.fresh(now));
        long start = Math.max(now + overhead / 2, r.freeAt());
        long tail = (overhead - overhead / 2) + config.safetyMarginNanos(); // from the container's finish to the answer
        long batchStart = start;
        if (r.holds(best.id)) {
            r.touch(best.id);
        } else {
            for (ServedModel<?> victim : r.evictFor(best)) {
                evictions++;
                actions.unload(r.id(), victim.id);
            }
            r.hold(best);
            Load load = new Load(r, best.id, now, start, start + best.loadNanos);
            batchStart = load.predictedFinish();
            r.sent(load, best.id, now, best.loadNanos, batchStart);
            loads++;
            actions.load(load);
        }
        long budget = best.queue.peek().deadline() - batchStart - tail;
        int cap = Math.min(best.queue.size(), config.batchCap());
        int b = planService && !bestProbes ? Math.max(1, best.profile.largestWithin(budget, cap)) : 1;
        List<Query<P>> items = new ArrayList<>(b);
        for (int i = 0; i < b; i++) {
            Query<P> q = best.queue.poll();
            q.attempts++;
            items.add(q);
        }
        if (best.queue.isEmpty()) {
            waiting.remove(best);
        }
        long finish = batchStart + (planService ? best.serviceNanos(b) : 0);
        Batch<P> batch = new Batch<>(r.lane, best.id, items, now, batchStart, finish, r.idle());
        r.sent(batch, best.id, now, finish - batchStart, Math.max(finish, now));
        sentBatches++;
        sentQueries += b;
        actions.send(batch);
        return true;
    }

    /**
     * Answers with the default the queries that no available replica could answer in time even
     * alone (counting the load where their model is not held), nor as a probe, and those of models
     * that no available replica has the budget for.
     */
    private void rejectUnanswerable(long now) {
        for (Iterator<ServedModel<P>> it = waiting.iterator(); it.hasNext(); ) {
            ServedModel<P> m = it.next();
            long earliest = Long.MAX_VALUE;
            for (SharedReplica r : replicas.values()) {
                if (r.available() && r.budgetBytes >= m.sizeBytes) {
                    earliest = Math.min(earliest, Math.min(earliestAnswer(m, r, now), probeAnswer(m, r, now)));
                }
            }
            RejectReason reason = earliest == Long.MAX_VALUE ? RejectReason.NO_REPLICA : RejectReason.INFEASIBLE;
            Query<P> head;
            while ((head = m.queue.peek()) != null && head.deadline() < earliest) {
                reject(m.queue.poll(), reason);
            }
            if (m.queue.isEmpty()) {
                it.remove();
            }
        }
    }

    /** When a batch of one of {@code m} would answer at the earliest on {@code r}, loading it first if not held. */
    private long earliestAnswer(ServedModel<P> m, SharedReplica r, long now) {
        return answerAt(m, r, r.overheadNanos(), m.serviceNanos(1), now);
    }

    /**
     * When a batch of one of {@code m} sent to {@code r} as a probe would answer: {@code r} idle and
     * not probed within the sample age limit, and the estimates last measured longer ago than that
     * limit (its transport overhead, the model's service time) counting as nothing;
     * {@code Long.MAX_VALUE} when {@code r} may not be probed now or both estimates are recent. As
     * {@link ModelScheduler} probes a stale profile: an estimate measured during a slow spell (a cold
     * gateway or container, a starved machine) that made every query look infeasible would otherwise
     * never be measured again, and nothing would be sent for good. One probe per replica and age
     * limit: a rarely used model's service time is old most of the time, and probing each of them
     * would send queries that the estimates rightly find too late.
     */
    private long probeAnswer(ServedModel<P> m, SharedReplica r, long now) {
        boolean staleOverhead = !r.overheadFresh(now);
        boolean staleService = m.profile.known() && !m.profile.fresh(now);
        if (!r.idle() || !staleOverhead && !staleService
                || r.probedAt != Long.MIN_VALUE && now - r.probedAt <= config.profileMaxAgeNanos()) {
            return Long.MAX_VALUE;
        }
        return answerAt(m, r, staleOverhead ? 0 : r.overheadNanos(), staleService ? 0 : m.serviceNanos(1), now);
    }

    /** When a batch of one of {@code m} would answer on {@code r} with these estimates, loading it first if not held. */
    private long answerAt(ServedModel<P> m, SharedReplica r, long overhead, long service, long now) {
        long start = Math.max(now + overhead / 2, r.freeAt());
        return start + (r.holds(m.id) ? 0 : m.loadNanos) + service + (overhead - overhead / 2)
                + config.safetyMarginNanos();
    }

    /** Whether another available replica holds {@code m} and could answer a query due at {@code deadline} in time. */
    private boolean heldInTimeElsewhere(ServedModel<P> m, SharedReplica except, long deadline, long now) {
        for (SharedReplica r : replicas.values()) {
            if (r != except && r.available() && r.holds(m.id)
                    && Math.min(earliestAnswer(m, r, now), probeAnswer(m, r, now)) <= deadline) {
                return true;
            }
        }
        return false;
    }

    /** Available replicas that can take a batch (fewer than two outstanding), free earliest first, ties in order of joining. */
    private List<SharedReplica> byFreeTime() {
        List<SharedReplica> out = new ArrayList<>(replicas.size());
        for (SharedReplica r : replicas.values()) {
            if (r.available() && r.outstandingBatches() < 2) {
                out.add(r);
            }
        }
        out.sort((a, b) -> Long.compare(a.freeAt(), b.freeAt()));
        return out;
    }

    private boolean heldAnywhere(ServedModel<P> m) {
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

    private void reject(Query<P> q, RejectReason reason) {
        rejected[reason.ordinal()]++;
        actions.reject(q, reason);
    }

    // ---- metrics (plain reads) ----

    /** Queries submitted so far. */
    public long arrived() {
        return arrived;
    }

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

    /** Queries sent in batches so far (a retried query counts once per batch). */
    public long sentQueries() {
        return sentQueries;
    }

    /** Batches sent so far. */
    public long sentBatches() {
        return sentBatches;
    }

    /** Queries rejected for {@code reason} so far. */
    public long rejected(RejectReason reason) {
        return rejected[reason.ordinal()];
    }

    /** Queries waiting, all models together. */
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

    /** Container time a replica spent on completed loads and batches, in nanoseconds; 0 if unknown. */
    public long busyNanos(String replica) {
        SharedReplica r = replicas.get(replica);
        return r == null ? 0 : r.replica.busyNanos;
    }
}

package io.servegate.core.scheduling;

import io.servegate.core.autoscaling.ArrivalEnvelope;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The scheduler of one model version: it owns the queue of all that version's queries and all
 * its replicas, and binds queries to a replica only when it sends their batch (late binding, as
 * in Clockwork and Symphony). Its {@link SchedulingPolicy} decides what to send when.
 *
 * <p><b>Events in</b>: {@link #submit a query arrives}, a replica is {@link #addReplica added},
 * {@link #removeReplica removed} or changes {@link #setAvailable availability}, a batch
 * {@link #batchCompleted completes} with the container's service time or
 * {@link #batchFailed fails}, a profiling sample is {@link #profileSample measured}, a
 * {@link #timer timer fires}. <b>Actions out</b>, through {@link SchedulerActions}: send this
 * batch to replica R, answer query Q now with the default, wake me at T.
 *
 * <p>Time is passed in with every event (nanoseconds on one monotonic clock, or a simulator's
 * virtual clock); the scheduler reads no clock, starts no thread and does no I/O. <b>Not
 * thread-safe</b>: a driver serialises the events of one model (the gateway holds a lock and
 * carries the actions out after releasing it).
 *
 * <p>Guarantees, whatever the policy: every submitted query leaves exactly once, in one batch
 * that completes, one rejection, or the list {@link #batchFailed} returns; nothing waits past its
 * deadline, since a wake-up is always requested for the earliest one.
 *
 * @param <P> what the caller keeps with each query
 */
public final class ModelScheduler<P> {

    private SchedulerConfig config;
    private SchedulingPolicy policy;
    /** The profiles' largest batch size: the maximum batch size the scheduler was made with. */
    private final int profiledMaxBatch;
    private final SchedulerActions<P> actions;
    final DeadlineQueue<P> queue = new DeadlineQueue<>();
    private final Map<String, Replica> replicas = new LinkedHashMap<>();
    final List<Lane> lanes = new ArrayList<>();
    /** Every replica's samples together: what a replica without its own samples is assumed to cost. */
    private final ReplicaProfile pooled;
    private final ArrivalRate arrivalRate = new ArrivalRate(1_000_000_000L);
    private final ArrivalEnvelope envelope = new ArrivalEnvelope();
    private long armedAt = Long.MAX_VALUE;
    private long policyWake = Long.MAX_VALUE;

    private long arrived;
    private long sentQueries;
    private long sentBatches;
    /** Queries answered after their deadline, or failed. */
    private long lateOrFailed;
    private final long[] rejected = new long[RejectReason.values().length];

    public ModelScheduler(SchedulerConfig config, SchedulerActions<P> actions) {
        this.config = Objects.requireNonNull(config, "config");
        this.actions = Objects.requireNonNull(actions, "actions");
        this.policy = config.policy().create(config);
        this.profiledMaxBatch = config.maxBatchSize();
        this.pooled = newProfile();
    }

    /**
     * Changes the largest batch the scheduler sends (AIMD's ceiling under Clipper, the batch cap
     * under the other policies), keeping the queue, the replicas and their profiles. The policy
     * starts afresh with the new size, as if every replica had just joined.
     *
     * @param maxBatchSize between 1 and the maximum batch size the scheduler was created with,
     *                     which the profiles cover
     */
    public void setMaxBatchSize(int maxBatchSize, long now) {
        if (maxBatchSize < 1 || maxBatchSize > profiledMaxBatch) {
            throw new IllegalArgumentException("maxBatchSize must be in 1.." + profiledMaxBatch + ", got " + maxBatchSize);
        }
        if (maxBatchSize == config.maxBatchSize()) {
            return;
        }
        config = config.withBatchSizes(maxBatchSize, config.fixedBatchSize());
        policy = config.policy().create(config);
        for (Replica r : replicas.values()) {
            r.batching = null;
            r.lanes.forEach(policy::added);
        }
        run(now);
    }

    // ---- events ----

    /**
     * A query arrives. It is rejected at once when no replica is available
     * ({@link RejectReason#NO_REPLICA}) or the queue is full ({@link RejectReason#OVERLOADED}).
     *
     * @return the query, which the caller will see again in a batch or a rejection
     */
    public Query<P> submit(P payload, long deadline, long now) {
        Query<P> q = new Query<>(payload, now, deadline);
        arrived++;
        arrivalRate.record(now);
        envelope.record(now);
        if (!anyAvailable()) {
            reject(q, RejectReason.NO_REPLICA);
        } else if (queue.size() >= config.queueCapacity()) {
            reject(q, RejectReason.OVERLOADED);
        } else {
            queue.add(q);
            run(now);
        }
        return q;
    }

    /**
     * A replica joins, unavailable until {@link #setAvailable} says otherwise (after its
     * readiness check and warm-up). Adding a known replica again does nothing.
     *
     * @param concurrency batches the container runs at once, {@code >= 1}
     */
    public void addReplica(String id, int concurrency, long now) {
        if (concurrency < 1) {
            throw new IllegalArgumentException("concurrency must be >= 1, got " + concurrency);
        }
        if (replicas.containsKey(id)) {
            return;
        }
        Replica r = new Replica(id, concurrency, newProfile(), now);
        replicas.put(id, r);
        for (Lane lane : r.lanes) {
            lanes.add(lane);
            policy.added(lane);
        }
    }

    /**
     * A replica leaves. Its outstanding batches are the driver's to fail (their completions are
     * then ignored); when no available replica remains, the queued queries are rejected.
     */
    public void removeReplica(String id, long now) {
        Replica r = replicas.remove(id);
        if (r != null) {
            lanes.removeAll(r.lanes);
            run(now);
        }
    }

    /** Whether a replica takes batches: ready, circuit not open. Queries wait while none does. */
    public void setAvailable(String id, boolean available, long now) {
        Replica r = replicas.get(id);
        if (r != null && r.available != available) {
            r.available = available;
            run(now);
        }
    }

    /**
     * A batch returned.
     *
     * @param serviceNanos the container's own time for it ({@code servegate_service_time_ns}),
     *                     or {@code <= 0} when it reports none (the round trip is used instead)
     */
    public void batchCompleted(Batch<P> batch, long serviceNanos, long now) {
        Lane lane = batch.lane();
        if (!lane.outstanding.remove(batch)) {
            return; // stale or duplicate
        }
        for (Query<P> q : batch.queries()) {
            if (q.deadline() < now) {
                lateOrFailed++;
            }
        }
        long roundTrip = Math.max(0, now - batch.sentAt());
        long service = serviceNanos > 0 ? serviceNanos : roundTrip;
        long overhead = batch.sentToIdle() && serviceNanos > 0 ? Math.max(0, roundTrip - serviceNanos) : -1;
        if (lane.replica.warm) {
            record(lane.replica, batch.size(), service, overhead, now);
        }
        lane.replica.warm = true;
        lane.replica.busy(service, now);
        policy.completed(lane, batch.size(), service);
        settle(lane, now);
        run(now);
    }

    /**
     * A batch failed, or part of it (a batch may go out as several calls). Each query of
     * {@code retry} (those hit by a transport failure or a refused call) that has attempts left
     * and time before its deadline goes back into the queue, for any available replica; the
     * others of {@code retry} are returned for the caller to fail with the batch's error. The
     * batch's queries not in {@code retry} are the caller's: answered or failed already.
     */
    public List<Query<P>> batchFailed(Batch<P> batch, Collection<Query<P>> retry, long now) {
        Lane lane = batch.lane();
        if (!lane.outstanding.remove(batch)) {
            return List.of();
        }
        settle(lane, now);
        List<Query<P>> failed = new ArrayList<>();
        for (Query<P> q : retry) {
            if (q.attempts < config.maxAttempts() && q.deadline() > now && anyAvailable()) {
                queue.add(q);
            } else {
                failed.add(q);
            }
        }
        lateOrFailed += failed.size();
        run(now);
        return failed;
    }

    /**
     * A measured batch outside live traffic (the profiling pass at registration, after a warm-up
     * call the driver does not report): seeds the replica's profile before queries depend on it.
     * A replica with no such sample treats its first live batch as its warm-up, and learns from
     * the second on.
     */
    public void profileSample(String id, int batchSize, long serviceNanos, long roundTripNanos, long now) {
        Replica r = replicas.get(id);
        if (r != null && batchSize >= 1 && serviceNanos > 0) {
            record(r, batchSize, serviceNanos, Math.max(0, roundTripNanos - serviceNanos), now);
            r.warm = true;
        }
    }

    /** A wake-up requested through {@link SchedulerActions#wakeAt} is due (or any time: harmless). */
    public void timer(long now) {
        if (armedAt <= now) {
            armedAt = Long.MAX_VALUE;
        }
        run(now);
    }

    // ---- what policies use ----

    /** Re-evaluates after an event: expired queries leave, the policy acts, the next wake-up is asked for. */
    private void run(long now) {
        Query<P> head;
        while ((head = queue.peek()) != null && head.deadline() <= now) {
            reject(queue.poll(), RejectReason.DEADLINE);
        }
        if (!queue.isEmpty() && !anyAvailable()) {
            for (Query<P> q : queue.drain()) {
                reject(q, RejectReason.NO_REPLICA);
            }
        }
        policyWake = Long.MAX_VALUE;
        if (!queue.isEmpty()) {
            policy.schedule(this, now);
        }
        long next = queue.isEmpty() ? policyWake : Math.min(policyWake, queue.peek().deadline());
        if (next != Long.MAX_VALUE && (next < armedAt || armedAt <= now)) {
            armedAt = next;
            actions.wakeAt(next);
        }
    }

    SchedulerConfig config() {
        return config;
    }

    /** Asks to be scheduled again at {@code at} even if nothing happens. */
    void wakeAt(long at) {
        policyWake = Math.min(policyWake, at);
    }

    /**
     * The available lane that will be free earliest among those holding fewer than
     * {@code depth} batches (ties: fewer outstanding, then order of joining); null if none.
     */
    Lane earliestLane(int depth) {
        Lane best = null;
        for (int i = 0, n = lanes.size(); i < n; i++) {
            Lane l = lanes.get(i);
            if (!l.replica.available || l.outstanding.size() >= depth) {
                continue;
            }
            if (best == null || l.freeAt < best.freeAt
                    || (l.freeAt == best.freeAt && l.outstanding.size() < best.outstanding.size())) {
                best = l;
            }
        }
        return best;
    }

    /**
     * The profile to plan {@code lane} with: its own, else every replica's pooled, if fresh; null
     * when neither is, and the policy should probe.
     */
    ReplicaProfile profile(Lane lane, long now) {
        ReplicaProfile own = lane.replica.profile;
        return own.fresh(now) ? own : pooled.fresh(now) ? pooled : null;
    }

    /** Queries per second over about the last second (an exponentially decayed count). */
    public double arrivalRate(long now) {
        return arrivalRate.perSecond(now);
    }

    /**
     * Sends the {@code count} earliest-deadline queries to {@code lane}.
     *
     * @param predictedStart  when the container is expected to start it
     * @param predictedFinish when the container is expected to finish it
     */
    void send(Lane lane, int count, long now, long predictedStart, long predictedFinish) {
        List<Query<P>> items = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            Query<P> q = queue.poll();
            q.attempts++;
            items.add(q);
        }
        Batch<P> batch = new Batch<>(lane, null, items, now, predictedStart, predictedFinish, lane.outstanding.isEmpty());
        lane.outstanding.addLast(batch);
        lane.freeAt = Math.max(predictedFinish, now);
        sentBatches++;
        sentQueries += count;
        actions.send(batch);
    }

    void reject(Query<P> q, RejectReason reason) {
        rejected[reason.ordinal()]++;
        actions.reject(q, reason);
    }

    // ---- metrics (plain reads: a gauge may see a value one event old) ----

    /** Queries waiting in the model's queue. */
    public int queued() {
        return queue.size();
    }

    /** Queries submitted so far. */
    public long arrived() {
        return arrived;
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

    /**
     * Queries answered late, failed, or rejected with a default so far: the numerator of
     * Symphony's bad rate.
     */
    public long bad() {
        long bad = lateOrFailed;
        for (long r : rejected) {
            bad += r;
        }
        return bad;
    }

    /** The arrivals' traffic envelope; read it as the scheduler's events are serialised. */
    public ArrivalEnvelope envelope() {
        return envelope;
    }

    /** Replicas taking batches now. */
    public int availableReplicas() {
        int n = 0;
        for (Replica r : replicas.values()) {
            if (r.available) {
                n++;
            }
        }
        return n;
    }

    /** The available replicas' mean idle fraction over the last ten seconds; NaN when none is available. */
    public double idleFraction(long now) {
        double sum = 0;
        int n = 0;
        for (Replica r : replicas.values()) {
            if (r.available) {
                sum += r.idleFraction(now);
                n++;
            }
        }
        return n == 0 ? Double.NaN : sum / n;
    }

    /**
     * {@code ℓ(b)} for {@code b = 1..batchCap} as the policies plan with it, the model's service
     * time plus its transport overhead, in nanoseconds; null while nothing is measured.
     */
    public long[] latencyByBatchNanos() {
        if (!pooled.known()) {
            return null;
        }
        long[] out = new long[config.batchCap()];
        long overhead = pooled.overheadNanos();
        for (int b = 1; b <= out.length; b++) {
            out[b - 1] = pooled.serviceNanos(b) + overhead;
        }
        return out;
    }

    /** The largest batch it sends now (AIMD's ceiling under Clipper). */
    public int maxBatchSize() {
        return config.maxBatchSize();
    }

    /** The latency objective it schedules for. */
    public long sloNanos() {
        return config.sloNanos();
    }

    /** The policy's kind. */
    public PolicyKind policy() {
        return config.policy();
    }

    /** Ids of the replicas, in order of joining. */
    public Collection<String> replicaIds() {
        return List.copyOf(replicas.keySet());
    }

    /** Share of the last ten seconds a replica's lanes spent idle, in [0, 1]; NaN for an unknown replica. */
    public double idleFraction(String id, long now) {
        Replica r = replicas.get(id);
        return r == null ? Double.NaN : r.idleFraction(now);
    }

    /**
     * The largest batch a replica is sent now: its AIMD (or fixed) size under Clipper, the batch
     * cap under the other policies; 0 for an unknown replica.
     */
    public int maxBatchSize(String id) {
        Replica r = replicas.get(id);
        return r == null ? 0 : r.batching != null ? r.batching.maxBatchSize() : config.batchCap();
    }

    /** Total container time a replica has spent on completed batches, in nanoseconds; 0 if unknown. */
    public long busyNanos(String id) {
        Replica r = replicas.get(id);
        return r == null ? 0 : r.busyNanos;
    }

    /**
     * The model's estimated service time of a batch of {@code size} (every replica's samples),
     * or -1 while nothing has been measured.
     */
    public long estimateNanos(int size) {
        return pooled.known() ? pooled.serviceNanos(size) : -1;
    }

    /** The model's transport overhead (a low quantile of round trip minus service time), 0 before any sample. */
    public long overheadNanos() {
        return pooled.overheadNanos();
    }

    // ---- internals ----

    private boolean anyAvailable() {
        for (Replica r : replicas.values()) {
            if (r.available) {
                return true;
            }
        }
        return false;
    }

    private ReplicaProfile newProfile() {
        return new ReplicaProfile(config.profileWindow(), config.profileMaxAgeNanos(), profiledMaxBatch);
    }

    private void record(Replica r, int size, long service, long overhead, long now) {
        r.profile.record(size, service, overhead, now);
        pooled.record(size, service, overhead, now);
    }

    /** After a batch left {@code lane}: when is it free now? */
    private void settle(Lane lane, long now) {
        Batch<?> next = lane.outstanding.peekFirst();
        if (next == null) {
            lane.freeAt = now;
        } else {
            // the next batch started when the container finished this one, half an overhead ago
            ReplicaProfile p = lane.replica.profile.known() ? lane.replica.profile : pooled.known() ? pooled : null;
            long half = p == null ? 0 : p.overheadNanos() / 2;
            long started = Math.max(now - half, next.sentAt() + half);
            long finish = started + (p == null ? 0 : p.serviceNanos(next.size()));
            for (Batch<?> b : lane.outstanding) {
                if (b != next) {
                    finish += p == null ? 0 : p.serviceNanos(b.size());
                }
            }
            lane.freeAt = Math.max(now, finish);
        }
    }
}

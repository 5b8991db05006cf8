package io.servegate.core.scheduling;

import io.servegate.core.autoscaling.ArrivalEnvelope;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The {@link Scheduler} of one model version: it owns the queue of all that version's queries
 * and all its replicas, each running one or more batches at once, and binds queries to a replica
 * only when it sends their batch. Its {@link SchedulingPolicy} decides what to send when.
 *
 * <p>Replicas join with {@link #addReplica}, unavailable until {@link #setAvailable} says
 * otherwise; the batch cap may change with {@link #setMaxBatchSize}. The rest is
 * {@link Scheduler}'s: every submitted query leaves exactly once, and nothing waits past its
 * deadline, whatever the policy.
 *
 * @param <P> what the caller keeps with each query
 */
public final class ModelScheduler<P> extends AbstractScheduler<P> {

    private final String model;
    private SchedulerConfig config;
    private SchedulingPolicy policy;
    /** The profiles' largest batch size: the maximum batch size the scheduler was made with. */
    private final int profiledMaxBatch;
    final DeadlineQueue<P> queue = new DeadlineQueue<>();
    private final Map<String, Replica> replicas = new LinkedHashMap<>();
    final List<Lane> lanes = new ArrayList<>();
    /** Every replica's samples together: what a replica without its own samples is assumed to cost. */
    private final ReplicaProfile pooled;
    private final ArrivalRate arrivalRate = new ArrivalRate(1_000_000_000L);
    /** Arrivals due within the SLO as they arrive: the queries that those not yet due must not hold up. */
    private final ArrivalRate dueArrivalRate = new ArrivalRate(1_000_000_000L);
    /** The latest deadline of the arrivals not due within the SLO as they arrived; after it, every query queued is due. */
    private long latestNotDue = Long.MIN_VALUE;
    private final ArrivalEnvelope envelope = new ArrivalEnvelope();
    private final TierAdmission tiers = new TierAdmission();
    private final TierBatchCap tierCap = new TierBatchCap(tiers);
    /** What the last {@link #batchCap} held batches to, below the configured cap; {@link Integer#MAX_VALUE} when nothing. */
    private int capApplied = Integer.MAX_VALUE;
    /** Queries answered after their deadline, or failed. */
    private long lateOrFailed;

    /** @param model the model version it serves, as its batches and {@link #submit} name it */
    public ModelScheduler(String model, SchedulerConfig config, SchedulerActions<P> actions) {
        super(actions);
        this.model = Objects.requireNonNull(model, "model");
        this.config = Objects.requireNonNull(config, "config");
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
     * ({@link RejectReason#NO_REPLICA}), the queue is full ({@link RejectReason#OVERLOADED}), or
     * the model is over capacity and its tier's share cannot answer it in time
     * ({@link RejectReason#SHED}, {@link TierAdmission}).
     */
    @Override
    public Query<P> submit(String modelId, P payload, long deadline, Tenant tenant, long now) {
        requireServed(modelId);
        Query<P> q = arrive(payload, deadline, tenant, now);
        arrivalRate.record(now);
        if (deadline - now <= config.sloNanos()) {
            dueArrivalRate.record(now);
        } else {
            latestNotDue = Math.max(latestNotDue, deadline);
        }
        envelope.record(now);
        tiers.arrived(tenant, now);
        if (availableLanes() == 0) {
            reject(q, RejectReason.NO_REPLICA);
        } else if (queue.size() >= config.queueCapacity()) {
            reject(q, RejectReason.OVERLOADED);
        } else if (!tiers.admit(this, q, pooled.known() ? pooled : null, now)) {
            reject(q, RejectReason.SHED);
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

    /** When no available replica remains, the queued queries are rejected. */
    @Override
    public void removeReplica(String id, long now) {
        Replica r = replicas.remove(id);
        if (r != null) {
            lanes.removeAll(r.lanes);
            run(now);
        }
    }

    /** Queries wait while no replica is available. */
    @Override
    public void setAvailable(String id, boolean available, long now) {
        Replica r = replicas.get(id);
        if (r != null && r.available != available) {
            r.available = available;
            run(now);
        }
    }

    @Override
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
        long service = serviceNanos(batch, serviceNanos, now);
        long overhead = overheadNanos(batch, serviceNanos, now);
        if (lane.replica.warm) {
            record(lane.replica, batch.size(), service, overhead, now);
        }
        lane.replica.warm = true;
        lane.replica.busy(service, now);
        policy.completed(lane, batch.size(), service);
        settle(lane, now);
        run(now);
    }

    @Override
    public List<Query<P>> batchFailed(Batch<P> batch, Collection<Query<P>> retry, long now) {
        Lane lane = batch.lane();
        if (!lane.outstanding.remove(batch)) {
            return List.of();
        }
        settle(lane, now);
        List<Query<P>> failed = new ArrayList<>();
        for (Query<P> q : retry) {
            if (mayRetry(q, now) && availableLanes() > 0) {
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
     * Seeds the replica's profile (the profiling pass at registration, after a warm-up call the
     * driver does not report). A replica with no such sample treats its first live batch as its
     * warm-up, and learns from the second on.
     */
    @Override
    public void profileSample(String id, String modelId, int batchSize, long serviceNanos, long roundTripNanos,
            long now) {
        requireServed(modelId);
        Replica r = replicas.get(id);
        if (r != null && batchSize >= 1 && serviceNanos > 0) {
            record(r, batchSize, serviceNanos, Math.max(0, roundTripNanos - serviceNanos), now);
            r.warm = true;
        }
    }

    /**
     * Gives the version up to the scheduler that takes it over: every queued query leaves with
     * {@link RejectReason#MOVED}, for the caller to route there, and the batches already sent run
     * on. What the next scheduler should wait for is returned: two schedulers planning the same
     * replicas as free would each send batches that wait behind the other's.
     *
     * @return by replica, how long until the batches sent to it are planned to finish (0 for a
     *         replica with none), as {@link #busyFor} takes it
     */
    public Map<String, Long> handOver(long now) {
        for (Query<P> q : queue.drain()) {
            reject(q, RejectReason.MOVED);
        }
        Map<String, Long> backlog = new LinkedHashMap<>();
        for (Replica r : replicas.values()) {
            backlog.put(r.id, r.lanes.stream()
                    .mapToLong(l -> l.outstanding.isEmpty() ? 0 : Math.max(0, l.freeAt - now)).min().orElse(0));
        }
        return backlog;
    }

    /**
     * Another scheduler's batches occupy replica {@code id} for about {@code nanos} more (the fleet
     * member that scheduled this version until now, {@link #handOver}): its lanes are planned busy
     * until then, and the profiling policies send it their first batch ahead of that moment by the
     * transport overhead, as to a lane of their own, and Clipper's once it is free. An unknown
     * replica is ignored.
     */
    public void busyFor(String id, long nanos, long now) {
        Replica r = replicas.get(id);
        if (r == null || nanos <= 0) {
            return;
        }
        for (Lane l : r.lanes) {
            l.freeAt = Math.max(l.freeAt, now + nanos);
        }
        run(now);
    }

    // ---- what policies use ----

    @Override
    void expire(long now) {
        expire(queue, now);
    }

    @Override
    void schedule(long now) {
        if (!queue.isEmpty() && availableLanes() == 0) {
            for (Query<P> q : queue.drain()) {
                reject(q, RejectReason.NO_REPLICA);
            }
        }
        if (!queue.isEmpty()) {
            policy.schedule(this, now);
        }
    }

    @Override
    long earliestDeadline() {
        return queue.isEmpty() ? Long.MAX_VALUE : queue.peek().deadline();
    }

    @Override
    SchedulerConfig config() {
        return config;
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

    /**
     * The largest batch a policy may send now, planning with {@code profile}: the configured cap,
     * lower while apps of different tiers share the version over capacity ({@link TierBatchCap})
     * or while queries not yet due wait beside it ({@link #notDueCap}). A policy that holds its
     * batches to it asks here, and {@link #maxBatchSize} reports it.
     */
    int batchCap(ReplicaProfile profile, long now) {
        int cap = Math.min(tierCap.cap(this, profile, now), notDueCap(profile, now));
        capApplied = cap < config.batchCap() ? cap : Integer.MAX_VALUE;
        return cap;
    }

    /**
     * The largest batch that may carry queries not due within the SLO, the tightest of the apps
     * sharing the version (an app with a longer one, a burst of its rows queued): the queries due
     * within it, or the largest batch that answers within half of it, whichever is more. A longer
     * batch would hold the replica from the tighter apps' next queries for longer than they can
     * wait; the queries that can wait ride batches of that size in the time left between them.
     * {@link Integer#MAX_VALUE} while every query queued is due within the SLO, as with one app,
     * and while fewer than one query a second arrives due within it (only queries that can wait,
     * e.g. Open Inference Protocol calls with their own long timeout): there is nothing to protect.
     */
    int notDueCap(ReplicaProfile profile, long now) {
        if (latestNotDue <= now + config.sloNanos() || dueArrivalRate.perSecond(now) < 1) {
            return Integer.MAX_VALUE; // nothing queued could wait (one app, apps of one SLO), or nothing to protect
        }
        int half = Math.max(1, profile.largestWithin(config.sloNanos() / 2 - profile.overheadNanos(), config.batchCap()));
        if (queue.size() <= half) {
            return Integer.MAX_VALUE;
        }
        int due = queue.dueBy(now + config.sloNanos());
        return due >= queue.size() ? Integer.MAX_VALUE : Math.max(due, half);
    }

    /** As {@link #batchCap}, for pricing a query at the batch it may ride: nothing is sent, nothing reported. */
    int admissionBatchCap(ReplicaProfile profile, long now) {
        return tierCap.cap(this, profile, now);
    }

    /**
     * Whether the higher tiers go first in the batches and in pruning: while the version is short
     * of capacity ({@link TierAdmission#overCapacity}), and before anything is measured. Below
     * capacity every app is served as without tiers, by fair share: filled by tier there, a batch
     * sized on a lower tier's earliest query could leave that query for the next one, too late.
     */
    boolean tiersApply(ReplicaProfile profile, long now) {
        return profile == null || tiers.overCapacity(this, profile, now);
    }

    /** Queries per second over about the last second (an exponentially decayed count). */
    public double arrivalRate(long now) {
        return arrivalRate.perSecond(now);
    }

    /**
     * Sends {@code count} queries to {@code lane}: the earliest deadlines, or with several apps
     * queued their fair shares' first, those due within the SLO before them, the higher tiers'
     * before those while {@link #tiersApply}.
     *
     * @param predictedStart  when the container is expected to start it
     * @param predictedFinish when the container is expected to finish it
     */
    void send(Lane lane, int count, long now, long predictedStart, long predictedFinish) {
        boolean byTier = count < queue.size() && queue.apps() > 1 && tiersApply(profile(lane, now), now);
        Batch<P> batch = new Batch<>(lane, model, take(queue, count, predictedFinish - predictedStart, byTier,
                now + config.sloNanos()), now,
                predictedStart, predictedFinish, lane.outstanding.isEmpty());
        lane.outstanding.addLast(batch);
        lane.freeAt = Math.max(predictedFinish, now);
        send(batch);
    }

    // ---- metrics (plain reads: a gauge may see a value one event old) ----

    /** The model version it serves. */
    public String model() {
        return model;
    }

    /** Queries waiting in the model's queue. */
    @Override
    public int queued() {
        return queue.size();
    }

    /** Queries answered late, failed, or rejected with a default so far: the numerator of Symphony's bad rate. */
    public long bad() {
        return lateOrFailed + rejectedTotal() - rejected(RejectReason.MOVED);
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

    /** Lanes of the replicas taking batches now. */
    int availableLanes() {
        int n = 0;
        for (Replica r : replicas.values()) {
            if (r.available) {
                n += r.lanes.size();
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
     * cap under the other policies, or what the last decision held it to while tiers share an
     * overloaded version ({@link TierBatchCap}) or queries not yet due waited ({@link #notDueCap});
     * 0 for an unknown replica.
     */
    public int maxBatchSize(String id) {
        Replica r = replicas.get(id);
        return r == null ? 0 : r.batching != null ? r.batching.maxBatchSize()
                : Math.min(config.batchCap(), capApplied);
    }

    @Override
    public long busyNanos(String id) {
        Replica r = replicas.get(id);
        return r == null ? 0 : r.busyNanos;
    }

    /** The model's estimated service time of a batch of {@code size} (all replicas' samples); -1 before any. */
    public long estimateNanos(int size) {
        return pooled.known() ? pooled.serviceNanos(size) : -1;
    }

    /** The model's transport overhead (a low quantile of round trip minus service time), 0 before any sample. */
    public long overheadNanos() {
        return pooled.overheadNanos();
    }

    /** One replica's own profile (what another gateway may seed its own with); null while it has no sample. */
    public ReplicaEstimate estimate(String replica) {
        Replica r = replicas.get(replica);
        return r == null || !r.profile.known() ? null : r.profile.estimate();
    }

    // ---- internals ----

    private void requireServed(String id) {
        if (!model.equals(id)) {
            throw new IllegalArgumentException("unknown model " + id + ": this scheduler serves " + model);
        }
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

package io.servegate.gateway.dispatch;

import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.core.scheduling.MultiModelScheduler;
import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.scheduling.SchedulerConfig;
import io.servegate.gateway.config.ServegateProperties;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import reactor.core.scheduler.Scheduler;

/**
 * The named pools of multi-model replicas and the model versions placed on them: many model
 * versions per replica, each pool scheduled by one {@link SharedPool}. A model version placed on a
 * pool is served by the pool, whatever single-model replicas the registry lists for it.
 * Pools and placements live in this gateway's memory, made through the admin API's
 * {@code deploy_model} with a {@code pool}.
 */
public final class SharedPools implements AutoCloseable {

    private final ServegateProperties.Batching batching;
    private final ServegateProperties.Scheduling scheduling;
    private final ServegateProperties.Rpc rpc;
    private final MeterRegistry meters;
    private final LongSupplier clock;
    private final Scheduler timers;
    /** Copy-on-write: the request path reads without locks. */
    private volatile Map<String, SharedPool> pools = Map.of();
    /** The pool each placed model version ({@code name:version}) is on. */
    private volatile Map<String, SharedPool> byModel = Map.of();

    public SharedPools(ServegateProperties.Batching batching, ServegateProperties.Scheduling scheduling,
            ServegateProperties.Rpc rpc, MeterRegistry meters, LongSupplier clock, Scheduler timers) {
        this.batching = batching;
        this.scheduling = scheduling;
        this.rpc = rpc;
        this.meters = meters;
        this.clock = clock;
        this.timers = timers;
    }

    /**
     * Places {@code model} on pool {@code pool}, creating the pool on first use and adding the
     * replicas at {@code addresses} it does not have yet, each with a memory budget of
     * {@code budgetBytes}.
     *
     * @throws IllegalArgumentException a new pool without addresses, a budget other than the
     *                                  pool's, or a model larger than the budget
     * @throws IllegalStateException    the model version is placed on another pool
     */
    public synchronized void deploy(String pool, List<String> addresses, long budgetBytes, PlacedModel model) {
        SharedPool p = pools.get(pool);
        if (p == null && addresses.isEmpty()) {
            throw new IllegalArgumentException("pool '" + pool + "' does not exist yet: give its containers' "
                    + "'addresses' and 'memory_budget_bytes'");
        }
        if (budgetBytes <= 0) {
            throw new IllegalArgumentException("'memory_budget_bytes' must be > 0, got " + budgetBytes);
        }
        if (p != null && p.budgetBytes() != budgetBytes) {
            throw new IllegalArgumentException("pool '" + pool + "' has a memory budget of "
                    + p.budgetBytes() + " bytes per replica, not " + budgetBytes);
        }
        if (model.sizeBytes() > budgetBytes) {
            throw new IllegalArgumentException("model " + model.key() + " (" + model.sizeBytes()
                    + " bytes) is larger than pool '" + pool + "''s memory budget of " + budgetBytes + " bytes");
        }
        SharedPool placed = byModel.get(model.key());
        if (placed != null && !placed.name().equals(pool)) {
            throw new IllegalStateException("model " + model.key() + " is placed on pool '" + placed.name() + "'");
        }
        if (p == null) {
            p = new SharedPool(pool, budgetBytes, config(), clock, timers, meters, rpc.minBatchTimeout(),
                    (int) rpc.maxMessageSize().toBytes());
            Map<String, SharedPool> next = new HashMap<>(pools);
            next.put(pool, p);
            pools = Map.copyOf(next);
        }
        p.place(model);
        Map<String, SharedPool> nextByModel = new HashMap<>(byModel);
        nextByModel.put(model.key(), p);
        byModel = Map.copyOf(nextByModel);
        for (String address : addresses) {
            p.addReplica(pool + "-" + p.workers().size(), address);
        }
    }

    /** The driver of the pool a model version ({@code name:version}) is placed on, or null when it is placed on none. */
    SchedulerDriver<?> driver(String key) {
        SharedPool p = byModel.get(key);
        return p == null ? null : p.driver();
    }

    /** The input a placed model version ({@code name:version}) declares on its pool, or null when it is placed on none. */
    DeclaredInput declaredInput(String key) {
        SharedPool p = byModel.get(key);
        return p == null ? null : p.declaredInput(key);
    }

    /** Every pool: its replicas with what each holds, and the model versions placed on it. */
    public List<Placement> placements() {
        List<Placement> out = new ArrayList<>();
        for (SharedPool p : pools.values()) {
            List<ReplicaPlacement> replicas = new ArrayList<>();
            SchedulerDriver<MultiModelScheduler<PendingPrediction>> d = p.driver();
            for (ReplicaWorker w : p.workers()) {
                replicas.add(d.read(s -> new ReplicaPlacement(w.id(), w.address(), w.available(), p.budgetBytes(),
                        s.usedBytes(w.id()), s.heldModels(w.id()))));
            }
            List<String> models = d.models().stream().map(PlacedModel::key).sorted().toList();
            out.add(d.read(s -> new Placement(p.name(), replicas, models, s.arrived(), s.coldStarts(), s.loads(),
                    s.evictions())));
        }
        out.sort((a, b) -> a.pool().compareTo(b.pool()));
        return out;
    }

    /** Multi-model replicas are planned as Clockwork plans, whatever the default policy. */
    private SchedulerConfig config() {
        return SchedulerConfig.of(PolicyKind.CLOCKWORK, batching.defaultSlo().toNanos())
                .withBatchSizes(batching.maxBatchSize(), -1)
                .withQueueCapacity(batching.queueCapacity())
                .withProfile(batching.profileWindow(), batching.profileMaxAge().toNanos())
                .withSafetyMargin(scheduling.safetyMargin().toNanos());
    }

    @Override
    public synchronized void close() {
        pools.values().forEach(SharedPool::close);
        pools = Map.of();
        byModel = Map.of();
    }

    /**
     * A pool as the admin API shows it.
     *
     * @param models the model versions placed on it, {@code name:version}
     */
    public record Placement(String pool, List<ReplicaPlacement> replicas, List<String> models, long arrivals,
            long coldStarts, long loads, long evictions) {
    }

    /**
     * A replica of a pool.
     *
     * @param loaded the model versions it holds (loaded or loading), least recently used first
     */
    public record ReplicaPlacement(String id, String address, boolean available, long budgetBytes, long usedBytes,
            List<String> loaded) {
    }
}

package io.servegate.gateway.warmup;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.gateway.config.ServegateProperties;
import io.servegate.gateway.dispatch.ProfileSharing;
import io.servegate.gateway.dispatch.ReplicaPool;
import io.servegate.gateway.fleet.FleetNode;
import io.servegate.gateway.fleet.ForwardService;
import io.servegate.gateway.fleet.HopExercise;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.InMemoryRegistry;
import io.servegate.gateway.registry.ModelVersion;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import reactor.core.scheduler.Schedulers;

/**
 * The warm-up's queries through the scheduling and dispatch path: a replica pool of its own, built
 * as the gateway builds its one (same batching, scheduling and RPC settings, the same timers) but
 * on a registry and meters of its own, serving one model version with an
 * adaptive batch size on the {@link LoopbackContainer}. Its queries run the scheduler, the driver's
 * event loop, the replica worker's readiness check, profiling and batching, and the container
 * client, as a user's query does, while no registered model, replica or metric sees them. In a
 * fleet, the same pool also serves the warm-up's version on this gateway's forwarding port, and
 * queries forwarded to it there ({@link HopExercise}) run both ends of the hop between gateways.
 */
final class SchedulerExercise implements AutoCloseable {

    /** Any valid name: the registry is the exercise's own. */
    private static final String MODEL = "servegate-warm-up";
    private static final String VERSION = "1";
    private static final String REPLICA = "servegate-warm-up-1";

    private final InMemoryRegistry registry = new InMemoryRegistry();
    private final ReplicaPool pool;
    private final LongSupplier clock;
    private final Duration deadline;
    private final HopExercise hop;

    /** @param fleet this gateway's place in its fleet, whose hop is exercised too; null = none */
    SchedulerExercise(ServegateProperties props, LongSupplier clock, String containerAddress, FleetNode fleet) {
        this.clock = clock;
        this.deadline = props.batching().defaultSlo();
        this.pool = new ReplicaPool(props.batching(), props.scheduling(), props.rpc(), new SimpleMeterRegistry(),
                clock, Schedulers.parallel(), null, ProfileSharing.ALONE);
        registry.addListener(pool::sync);
        ModelVersion version = new ModelVersion(MODEL, VERSION, List.of(), "floats", "", "",
                ModelVersion.ADAPTIVE_BATCH_SIZE);
        registry.addModel(version).block();
        registry.addReplica(new ContainerReplica(REPLICA, MODEL, VERSION,
                containerAddress)).block();
        // forwarded under the name no registry accepts: no user's version is ever served by this pool
        this.hop = fleet == null ? null : fleet.exercise(new ForwardService.Exercise(SelfExercise.MODEL, version, pool));
    }

    /** Whether {@link #forward} exercises a fleet hop (the gateway is a fleet member). */
    boolean forwards() {
        return hop != null;
    }

    /** As {@link #query}, forwarded through this gateway's own fleet port to the same pool (only when {@link #forwards}). */
    CompletableFuture<String> forward(float[] row) {
        return hop.forward(row, clock.getAsLong() + deadline.toNanos());
    }

    /** Whether the pool's replica takes queries yet (it is checked and profiled first, as any replica is). */
    boolean ready() {
        return pool.ready(MODEL, VERSION);
    }

    /**
     * One query, due within {@code batching.default-slo} (the SLO its scheduler plans for: a later
     * deadline lets the scheduler hold it to fill larger batches); not ready yet, it fails at once.
     */
    CompletableFuture<String> query(float[] row) {
        return pool.submit(MODEL, VERSION, row, clock.getAsLong() + deadline.toNanos());
    }

    @Override
    public void close() {
        if (hop != null) {
            hop.close();
        }
        // removing the replica closes its worker and channel, which closing the pool leaves to the registry
        registry.removeReplica(REPLICA).block();
        pool.close();
        registry.close();
    }
}

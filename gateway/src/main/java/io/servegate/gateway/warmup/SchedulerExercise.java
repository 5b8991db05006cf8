package io.servegate.gateway.warmup;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.gateway.config.ServegateProperties;
import io.servegate.gateway.dispatch.ProfileSharing;
import io.servegate.gateway.dispatch.ReplicaPool;
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
 * client, as a user's query does, while no registered model, replica or metric sees them.
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

    SchedulerExercise(ServegateProperties props, LongSupplier clock, String containerAddress) {
        this.clock = clock;
        this.deadline = props.batching().defaultSlo();
        this.pool = new ReplicaPool(props.batching(), props.scheduling(), props.rpc(), new SimpleMeterRegistry(),
                clock, Schedulers.parallel(), null, ProfileSharing.ALONE);
        registry.addListener(pool::sync);
        registry.addModel(new ModelVersion(MODEL, VERSION, List.of(), "floats", "", "",
                ModelVersion.ADAPTIVE_BATCH_SIZE)).block();
        registry.addReplica(new ContainerReplica(REPLICA, MODEL, VERSION,
                containerAddress)).block();
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
        // removing the replica closes its worker and channel, which closing the pool leaves to the registry
        registry.removeReplica(REPLICA).block();
        pool.close();
        registry.close();
    }
}

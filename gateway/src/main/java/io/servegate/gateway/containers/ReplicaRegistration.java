package io.servegate.gateway.containers;

import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Registry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * The registry entry of one replica id. Writes for the id are applied in the order they are made
 * (a shared registry completes them asynchronously). A failed registration is retried with
 * backoff until it succeeds or the replica is unregistered; a failed unregistration is logged. Not thread-safe: the owning manager calls it under its lock.
 */
final class ReplicaRegistration {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaRegistration.class);
    private static final Duration RETRY_MIN = Duration.ofMillis(100);
    private static final Duration RETRY_MAX = Duration.ofSeconds(5);

    private final Registry registry;
    private final String id;
    private final String model;
    private final String version;
    /** Read by a registration being retried, on another thread. */
    private volatile boolean registered;
    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);

    ReplicaRegistration(Registry registry, String id, String model, String version) {
        this.registry = registry;
        this.id = id;
        this.model = model;
        this.version = version;
    }

    /** Registers (or re-registers at a new address) the replica, so the gateway routes to it. */
    void register(String address) {
        registered = true;
        ContainerReplica replica = new ContainerReplica(id, model, version, address);
        // a replica that is ready but unregistered serves nobody: retried while it should be registered
        chain(Mono.defer(() -> registry.addReplica(replica)).retryWhen(Retry.backoff(Long.MAX_VALUE, RETRY_MIN)
                .maxBackoff(RETRY_MAX).filter(e -> registered)
                .doBeforeRetry(r -> LOG.warn("could not register replica {} (try {}), retrying: {}", id,
                        r.totalRetries() + 1, r.failure().getMessage()))), "register");
    }

    /** Unregisters the replica if it is registered. */
    void unregister() {
        if (registered) {
            registered = false;
            chain(registry.removeReplica(id), "unregister");
        }
    }

    /** The input type the model version is registered with (its clipper name), or null when it is not registered. */
    String inputType() {
        return registry.snapshot().model(model, version).map(ModelVersion::inputType).orElse(null);
    }

    boolean registered() {
        return registered;
    }

    /** @return completes once every write made so far is applied (or failed and was logged) */
    CompletableFuture<Void> settled() {
        return tail;
    }

    private void chain(Mono<Void> write, String what) {
        tail = tail.thenCompose(x -> write
                .onErrorResume(e -> {
                    LOG.warn("could not {} replica {}: {}", what, id, e.getMessage());
                    return Mono.empty();
                })
                .toFuture());
    }
}

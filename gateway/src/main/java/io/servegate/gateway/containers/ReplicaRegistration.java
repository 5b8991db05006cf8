package io.servegate.gateway.containers;

import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Registry;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * The registry entry of one replica id. Writes for the id are applied in the order they are made
 * (a shared registry completes them asynchronously), and a failed write is logged: the replica's
 * process goes on either way. Not thread-safe: the owning manager calls it under its lock.
 */
final class ReplicaRegistration {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaRegistration.class);

    private final Registry registry;
    private final String id;
    private final String model;
    private final String version;
    private boolean registered;
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
        chain(registry.addReplica(new ContainerReplica(id, model, version, address)), "register");
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

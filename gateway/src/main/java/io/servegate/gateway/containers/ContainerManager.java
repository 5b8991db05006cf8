package io.servegate.gateway.containers;

import java.util.List;
import reactor.core.publisher.Mono;

/**
 * Starts, health-checks, restarts, scales and stops the model containers of model versions
 * (Clipper's container management, one implementation per platform: local processes, Docker,
 * Kubernetes, or addresses only).
 *
 * <p>A manager owns the replicas it starts: it registers each with the gateway's registry only
 * once the container passes the Open Inference Protocol readiness check (ServerReady), applies its
 * restart policy when one dies, and unregisters a replica that died or was scaled away. The model
 * version itself must already be in the registry; {@link #deploy} does not add it.
 *
 * <p>All methods return lazy {@link Mono}s that never block the caller's thread; they fail with
 * {@link ContainerManagerException} for a refused request (unknown deployment, bad spec) or a
 * platform error.
 */
public interface ContainerManager extends AutoCloseable {

    /** @return the platform name: {@code process}, {@code docker}, {@code kubernetes} or {@code external} */
    String kind();

    /**
     * Deploys {@code spec.replicas()} replicas of a model version. Completes once the replicas are
     * started (not necessarily ready); {@code CONFLICT} if the version is already deployed here.
     */
    Mono<Deployment> deploy(DeploymentSpec spec);

    /** Scales a deployed model version up or down; {@code NOT_FOUND} if it is not deployed here. */
    Mono<Deployment> setReplicas(String modelName, String modelVersion, int replicas);

    /** @return every deployment this manager owns, with the state of each replica */
    Mono<List<Deployment>> list();

    /** Stops every replica of a model version and unregisters them; does nothing if it is not deployed. */
    Mono<Void> remove(String modelName, String modelVersion);

    /** Stops watching; whether running containers are stopped too is the implementation's documented choice. */
    @Override
    void close();
}

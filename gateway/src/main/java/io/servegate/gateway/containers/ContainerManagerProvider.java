package io.servegate.gateway.containers;

import io.servegate.gateway.registry.Registry;
import org.springframework.boot.context.properties.bind.Binder;

/**
 * Makes the {@link ContainerManager} of a platform that lives outside the gateway's own jar, such
 * as the {@code docker} and {@code kubernetes} managers (modules {@code container-manager-docker}
 * and {@code container-manager-kubernetes}), so that their client libraries are on the class path
 * only where they are used. A module lists its provider in
 * {@code META-INF/services/io.servegate.gateway.containers.ContainerManagerProvider}; the gateway
 * uses the one whose {@link #kind()} {@code servegate.containers.manager} names
 * ({@link ContainerManagerProviders#load}).
 */
public interface ContainerManagerProvider {

    /** @return the value of {@code servegate.containers.manager} that selects this manager */
    String kind();

    /**
     * Creates the manager; called once, at startup.
     *
     * @param registry where the manager registers ready replicas
     * @param probe    the OIP readiness check every manager applies
     * @param settings binds {@code servegate.containers.*}: the shared settings and the manager's own
     */
    ContainerManager create(Registry registry, ReadinessProbe probe, Binder settings);
}

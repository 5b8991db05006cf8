package io.servegate.gateway.containers.kubernetes;

import io.servegate.gateway.config.ServegateProperties;
import io.servegate.gateway.containers.ContainerManager;
import io.servegate.gateway.containers.ContainerManagerProvider;
import io.servegate.gateway.containers.ReadinessProbe;
import io.servegate.gateway.registry.Registry;
import org.springframework.boot.context.properties.bind.Binder;

/** {@code servegate.containers.manager=kubernetes}: the {@link KubernetesContainerManager}, on fabric8's own client. */
public final class KubernetesManagerProvider implements ContainerManagerProvider {

    @Override
    public String kind() {
        return "kubernetes";
    }

    @Override
    public ContainerManager create(Registry registry, ReadinessProbe probe, Binder settings) {
        ServegateProperties.Containers c = settings.bindOrCreate("servegate.containers",
                ServegateProperties.Containers.class);
        KubernetesProperties k = settings.bindOrCreate("servegate.containers.kubernetes", KubernetesProperties.class);
        return KubernetesContainerManager.create(registry, probe, new KubernetesContainerManager.Settings(
                k.namespace(), k.containerPort(), k.probe(), k.probeCommand(), c.readinessTimeout(), k.resync()));
    }
}

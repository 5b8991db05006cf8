package io.servegate.gateway.containers.docker;

import io.servegate.gateway.config.ServegateProperties;
import io.servegate.gateway.containers.ContainerManager;
import io.servegate.gateway.containers.ContainerManagerProvider;
import io.servegate.gateway.containers.ReadinessProbe;
import io.servegate.gateway.containers.RestartPolicy;
import io.servegate.gateway.registry.Registry;
import org.springframework.boot.context.properties.bind.Binder;
import reactor.core.scheduler.Schedulers;

/** {@code servegate.containers.manager=docker}: the {@link DockerContainerManager} on the configured engine. */
public final class DockerManagerProvider implements ContainerManagerProvider {

    @Override
    public String kind() {
        return "docker";
    }

    @Override
    public ContainerManager create(Registry registry, ReadinessProbe probe, Binder settings) {
        ServegateProperties.Containers c = settings.bindOrCreate("servegate.containers",
                ServegateProperties.Containers.class);
        DockerProperties d = settings.bindOrCreate("servegate.containers.docker", DockerProperties.class);
        return DockerContainerManager.start(d.host(), registry, probe, new DockerOptions(d.network(),
                d.containerPort(), RestartPolicy.parse(c.restartPolicy()), d.maxRestarts(), c.probeInterval(),
                c.probeTimeout(), c.livenessFailures(), c.readinessTimeout(), c.stopGracePeriod(), d.owner()),
                Schedulers.parallel());
    }
}

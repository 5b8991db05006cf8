package io.servegate.gateway.containers.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.exception.NotModifiedException;
import com.github.dockerjava.api.model.DeviceRequest;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import io.servegate.gateway.containers.ContainerManagerException;
import io.servegate.gateway.containers.ContainerManagerException.Kind;
import io.servegate.gateway.containers.DeploymentSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Docker side of a replica: creating and starting its labelled container on a reserved
 * loopback port, inspecting, and stopping and removing it. Every method blocks on
 * the engine's API.
 */
final class ReplicaContainers {

    static final String MANAGED = "servegate.managed";
    static final String OWNER = "servegate.owner";
    static final String MODEL = "servegate.model";
    static final String VERSION = "servegate.version";
    static final String REPLICA = "servegate.replica";

    private static final Logger log = LoggerFactory.getLogger(ReplicaContainers.class);
    private static final int PORT_ATTEMPTS = 3;

    /** A started container and the loopback port the gateway reaches it on. */
    record Started(String containerId, int port) {
    }

    private final DockerClient docker;
    private final DockerOptions options;
    private final PortReservations ports;

    ReplicaContainers(DockerClient docker, DockerOptions options, PortReservations ports) {
        this.docker = docker;
        this.options = options;
        this.ports = ports;
    }

    /**
     * Creates and starts the container {@code name} of a replica of {@code spec}. A host port
     * found free can be taken before Docker binds it; then the container is removed and started
     * again on another.
     *
     * @throws ContainerManagerException {@code INVALID} for an unknown image, {@code PLATFORM} otherwise
     */
    Started start(DeploymentSpec spec, String name) {
        for (int attempt = 1; ; attempt++) {
            int port = ports.reserve();
            String id = null;
            try (CreateContainerCmd create = docker.createContainerCmd(spec.image())) {
                HostConfig host = hostConfig(spec.resources());
                create.withName(name)
                        .withLabels(Map.of(MANAGED, "true", OWNER, options.owner(), MODEL, spec.modelName(),
                                VERSION, spec.modelVersion(), REPLICA, name))
                        .withEnv(env(spec, port).entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList());
                if (!spec.command().isEmpty()) {
                    create.withCmd(spec.command());
                }
                if (!options.hostNetwork()) {
                    ExposedPort exposed = ExposedPort.tcp(options.containerPort());
                    create.withExposedPorts(exposed);
                    host.withPortBindings(new PortBinding(Ports.Binding.bindIpAndPort("127.0.0.1", port), exposed));
                }
                id = create.withHostConfig(host).exec().getId();
                docker.startContainerCmd(id).exec();
                log.info("started {} ({}) for {}:{} on 127.0.0.1:{}", name, id.substring(0, 12), spec.modelName(),
                        spec.modelVersion(), port);
                return new Started(id, port);
            } catch (NotFoundException e) {
                discard(id, name, port);
                throw new ContainerManagerException(Kind.INVALID, "no such image '" + spec.image() + "': "
                        + e.getMessage(), e);
            } catch (DockerException | IllegalArgumentException e) {
                discard(id, name, port);
                if (attempt < PORT_ATTEMPTS && portTaken(e)) {
                    log.info("port {} of {} was taken before Docker bound it; trying another", port, name);
                    continue;
                }
                throw new ContainerManagerException(Kind.PLATFORM, "docker could not start " + name + ": "
                        + e.getMessage(), e);
            }
        }
    }

    private static boolean portTaken(RuntimeException e) {
        String message = String.valueOf(e.getMessage());
        return message.contains("address already in use") || message.contains("port is already allocated");
    }

    /** Removes a container created but not started, so that its name is free again, and frees its port. */
    private void discard(String containerId, String name, int port) {
        if (containerId != null) {
            try {
                docker.removeContainerCmd(containerId).withForce(true).exec();
            } catch (DockerException e) {
                log.warn("removing {} after its failed start: {}", name, e.getMessage());
            }
        }
        ports.release(port);
    }

    private Map<String, String> env(DeploymentSpec spec, int port) {
        Map<String, String> env = new LinkedHashMap<>(spec.env());
        env.put("MODEL_NAME", spec.modelName());
        env.put("MODEL_VERSION", spec.modelVersion());
        env.put("PORT", Integer.toString(options.hostNetwork() ? port : options.containerPort()));
        env.put("HOST", options.hostNetwork() ? "127.0.0.1" : "0.0.0.0");
        return env;
    }

    private HostConfig hostConfig(DeploymentSpec.Resources res) {
        HostConfig host = HostConfig.newHostConfig()
                .withNetworkMode(options.network())
                .withRestartPolicy(options.dockerPolicy());
        if (res.cpus() > 0) {
            host.withNanoCPUs(Math.round(res.cpus() * 1e9));
        }
        if (res.memoryBytes() > 0) {
            host.withMemory(res.memoryBytes());
        }
        if (res.gpus() > 0) {
            host.withDeviceRequests(List.of(new DeviceRequest().withCount(res.gpus())
                    .withCapabilities(List.of(List.of("gpu")))));
        }
        return host;
    }

    /** @throws NotFoundException when the container was removed */
    InspectContainerResponse inspect(String containerId) {
        return docker.inspectContainerCmd(containerId).exec();
    }

    /** Stops (letting it drain for the stop timeout) and removes a container, then frees its port. */
    void remove(String containerId, String name, int port) {
        try {
            docker.stopContainerCmd(containerId).withTimeout((int) options.stopTimeout().toSeconds()).exec();
        } catch (NotFoundException | NotModifiedException e) {
            // already gone or already stopped
        } catch (DockerException e) {
            log.warn("stopping {}: {}", name, e.getMessage());
        }
        try {
            docker.removeContainerCmd(containerId).withForce(true).exec();
        } catch (NotFoundException e) {
            // already gone
        }
        ports.release(port);
    }

    /** Frees the port of a container someone else removed. */
    void forget(int port) {
        ports.release(port);
    }
}

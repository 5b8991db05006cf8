package io.servegate.gateway.containers.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import io.servegate.gateway.registry.Registry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an earlier manager with the same owner left behind: its containers (it may have been
 * killed before it could remove them) and their registry entries. A manager removes them at
 * start instead of adopting containers whose deployment spec it no longer knows.
 */
final class LeftoverContainers {

    private static final Logger log = LoggerFactory.getLogger(LeftoverContainers.class);

    private LeftoverContainers() {
    }

    /** Removes every container labelled as managed by {@code owner}, unregistering its replica first. Blocks. */
    static void remove(DockerClient docker, Registry registry, String owner) {
        List<Container> left = docker.listContainersCmd().withShowAll(true)
                .withLabelFilter(Map.of(ReplicaContainers.MANAGED, "true", ReplicaContainers.OWNER, owner)).exec();
        for (Container c : left) {
            String replica = c.getLabels().get(ReplicaContainers.REPLICA);
            log.info("removing leftover container {} (replica {})", c.getId().substring(0, 12), replica);
            if (replica != null) {
                try {
                    registry.removeReplica(replica).block(Duration.ofSeconds(10));
                } catch (RuntimeException e) {
                    log.warn("unregistering leftover replica {}: {}", replica, e.getMessage());
                }
            }
            try {
                docker.removeContainerCmd(c.getId()).withForce(true).exec();
            } catch (NotFoundException e) {
                // gone meanwhile
            }
        }
    }
}

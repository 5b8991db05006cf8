package io.servegate.gateway.containers.docker;

import io.servegate.gateway.containers.DeploymentSpec;
import java.util.ArrayList;
import java.util.List;

/** A model version the Docker manager deployed; guarded by the manager's lock. */
final class DeployedVersion {
    final DeploymentSpec spec;
    final List<DockerReplica> replicas = new ArrayList<>();
    int desired;
    int nextSeq;

    DeployedVersion(DeploymentSpec spec) {
        this.spec = spec;
    }
}

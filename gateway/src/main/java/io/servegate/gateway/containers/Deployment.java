package io.servegate.gateway.containers;

import java.util.List;

/**
 * A deployed model version as its manager sees it.
 *
 * @param modelName       the model
 * @param modelVersion    the version
 * @param desiredReplicas how many replicas the manager keeps running
 * @param replicas        the replicas that exist now
 */
public record Deployment(String modelName, String modelVersion, int desiredReplicas, List<ReplicaStatus> replicas) {

    public Deployment {
        replicas = List.copyOf(replicas);
    }

    /** @return how many replicas passed the readiness check and are registered */
    public long readyReplicas() {
        return replicas.stream().filter(r -> r.state() == ReplicaStatus.State.READY).count();
    }
}

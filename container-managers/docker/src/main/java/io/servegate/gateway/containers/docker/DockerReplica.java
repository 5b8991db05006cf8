package io.servegate.gateway.containers.docker;

import io.servegate.gateway.containers.ReplicaStatus.State;

/** One replica's container; its registry id is the container name. Guarded by the manager's lock. */
final class DockerReplica {
    final DeployedVersion dep;
    final int seq;
    final String name;
    final String containerId;
    final String address;
    final int port;
    State state = State.STARTING;
    long unreadySince = System.nanoTime();
    String startedAt;
    int restarts;
    int failures;
    /** Set once scale-down, remove or close took it over: the watcher leaves it alone. */
    boolean stopping;

    DockerReplica(DeployedVersion dep, int seq, String name, String containerId, int port) {
        this.dep = dep;
        this.seq = seq;
        this.name = name;
        this.containerId = containerId;
        this.address = "127.0.0.1:" + port;
        this.port = port;
    }
}

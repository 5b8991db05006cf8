package io.servegate.gateway.containers;

/**
 * One replica of a deployment.
 *
 * @param id       the replica id it is (or will be) registered under
 * @param address  {@code host:port} of its OIP gRPC endpoint; null while unknown
 * @param state    where it is in its life
 * @param restarts how many times the manager restarted it
 */
public record ReplicaStatus(String id, String address, State state, int restarts) {

    /** Life of a replica: only {@code READY} replicas are registered and get traffic. */
    public enum State { STARTING, READY, UNHEALTHY, RESTARTING, STOPPED }
}

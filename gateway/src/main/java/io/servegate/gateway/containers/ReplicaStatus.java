package io.servegate.gateway.containers;

/**
 * One replica of a deployment.
 *
 * @param id       the replica id it is (or will be) registered under
 * @param address  {@code host:port} of its OIP gRPC endpoint; null while unknown
 * @param state    where it is in its life
 * @param restarts how many times the manager restarted it
 * @param detail   why it is not ready (what was tried and what came back), or null
 */
public record ReplicaStatus(String id, String address, State state, int restarts, String detail) {

    /** A replica with nothing to explain. */
    public ReplicaStatus(String id, String address, State state, int restarts) {
        this(id, address, state, restarts, null);
    }

    /** Life of a replica: only {@code READY} replicas are registered and get traffic. */
    public enum State { STARTING, READY, UNHEALTHY, RESTARTING, STOPPED }
}

package io.servegate.sim;

import io.servegate.sim.latency.LatencyModel;

/**
 * One emulated replica: a container that runs up to {@code concurrency} batches at once, each
 * for the time its latency model draws, behind a transport that adds half the overhead each way.
 *
 * @param id unique in the run
 * @param concurrency batches run at once
 * @param latency the container's service time per batch
 * @param overheadNanos round-trip transport overhead (serialisation, network, the gateway's queues), its
 *                      mean when it spreads
 * @param joinAtNanos when it joins, profiled and available (0: from the start)
 * @param failAtNanos when it dies, or {@link Long#MAX_VALUE} for never
 * @param overheadSigma each batch's overhead times lognormal noise exp(σZ − σ²/2) of this σ (mean 1), as a
 *                      shared machine's round trips spread: mostly short, a few far longer; 0: constant
 */
public record ReplicaSpec(String id, int concurrency, LatencyModel latency, long overheadNanos, long joinAtNanos,
        long failAtNanos, double overheadSigma) {

    public ReplicaSpec {
        if (concurrency < 1 || overheadNanos < 0 || joinAtNanos < 0 || failAtNanos <= joinAtNanos
                || !(overheadSigma >= 0)) {
            throw new IllegalArgumentException("bad replica " + id);
        }
    }

    /** A replica whose transport overhead is constant. */
    public ReplicaSpec(String id, int concurrency, LatencyModel latency, long overheadNanos, long joinAtNanos,
            long failAtNanos) {
        this(id, concurrency, latency, overheadNanos, joinAtNanos, failAtNanos, 0);
    }

    /** A replica there from the start that never fails. */
    public static ReplicaSpec of(String id, int concurrency, LatencyModel latency, long overheadNanos) {
        return new ReplicaSpec(id, concurrency, latency, overheadNanos, 0, Long.MAX_VALUE);
    }

    /** This replica, dying at {@code atNanos}. */
    public ReplicaSpec failingAt(long atNanos) {
        return new ReplicaSpec(id, concurrency, latency, overheadNanos, joinAtNanos, atNanos, overheadSigma);
    }

    /** This replica, its overhead spread by {@code sigma} (see {@link #overheadSigma}). */
    public ReplicaSpec withOverheadSigma(double sigma) {
        return new ReplicaSpec(id, concurrency, latency, overheadNanos, joinAtNanos, failAtNanos, sigma);
    }
}

package io.servegate.loadgen.load;

import java.util.concurrent.CompletableFuture;

/**
 * One kind of request a benchmark issues, independent of how requests are paced (closed loop,
 * open loop) and of how latencies are recorded. Implementations must be safe to call from many
 * threads at once.
 */
public interface Workload {

    /** Predictions each request asks for, so that throughput can be given in inputs/s. */
    int inputsPerRequest();

    /** Issues one request; the future completes when the answer arrives, exceptionally on failure. */
    CompletableFuture<?> send();
}

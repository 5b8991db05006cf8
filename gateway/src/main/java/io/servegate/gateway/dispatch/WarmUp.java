package io.servegate.gateway.dispatch;

import io.servegate.oip.client.TensorType;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What a replica runs once it first answers ServerReady, before it takes queries: all-zeros calls
 * so that the container's first-call costs (JIT, kernel selection, memory arenas) do not turn the
 * first real queries into defaults, measured so that the scheduler knows what the replica costs
 * before it relies on that. A failure ends the warm-up, and the replica takes queries all the same,
 * unless it says it does not serve the model version at all.
 */
interface WarmUp {

    /**
     * Warms {@code worker}'s replica up.
     *
     * @param held the model versions the container holds already ({@code name:version}; empty for
     *             a single-model replica)
     * @return completes (never exceptionally) when the replica may take queries
     */
    CompletableFuture<Void> run(ReplicaWorker worker, List<String> held);

    /** An all-zeros input of {@code length} values, or null for a type whose inputs cannot be made up (not numeric). */
    static Object zeros(TensorType<?> type, int length) {
        return switch (type.clipperName()) {
            case "ints" -> new int[length];
            case "floats" -> new float[length];
            case "doubles" -> new double[length];
            default -> null;
        };
    }
}

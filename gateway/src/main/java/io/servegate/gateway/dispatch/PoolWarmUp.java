package io.servegate.gateway.dispatch;

import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * A multi-model replica's warm-up, as a single-model replica's ({@link ProfilingWarmUp}): one
 * placed model ({@link #choose}) is loaded unless the container holds it, sent an all-zeros batch
 * of one whose time is no sample (it pays the gateway's and the container's one-off costs), then
 * one that is measured and seeds the replica's transport overhead and the model's service time,
 * and unloaded again if it was loaded for this, so that the container holds what the scheduler
 * thinks it holds. Without it the replica's first live batch would measure those one-off costs as
 * its overhead. First, what the container declares for every placed model is read
 * ({@link SharedPool#readDeclaration}).
 */
final class PoolWarmUp implements WarmUp {

    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
    /** As a single-model replica's warm-up calls may take. */
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

    private final Supplier<Collection<PlacedModel>> placed;
    private final BiConsumer<ReplicaWorker, PlacedModel> readDeclaration;

    /**
     * @param placed          the model versions placed on the pool now
     * @param readDeclaration reads what a replica's container declares for a placed model
     */
    PoolWarmUp(Supplier<Collection<PlacedModel>> placed, BiConsumer<ReplicaWorker, PlacedModel> readDeclaration) {
        this.placed = placed;
        this.readDeclaration = readDeclaration;
    }

    @Override
    public CompletableFuture<Void> run(ReplicaWorker worker, List<String> held) {
        for (PlacedModel m : placed.get()) {
            readDeclaration.accept(worker, m);
        }
        PlacedModel model = choose(placed.get(), held);
        if (model == null) {
            return DONE;
        }
        ContainerClient client = worker.client();
        boolean load = !held.contains(model.key());
        Duration timeout = ReplicaWorker.repositoryTimeout(model);
        @SuppressWarnings("unchecked")
        TensorType<Object> type = (TensorType<Object>) model.inputType();
        return (load ? client.loadModel(model.name(), model.version(), timeout) : DONE)
                .thenCompose(ignored -> client.modelMetadata(model.name(), model.version(), Duration.ofSeconds(1)))
                .thenCompose(md -> {
                    List<Object> zeros = List.of(WarmUp.zeros(type, Math.max(1, DeclaredInput.of(md, type).rowLength())));
                    return client.inferAsText(model.name(), model.version(), type, zeros, CALL_TIMEOUT)
                            .thenCompose(cold -> {
                                long start = worker.clock().getAsLong();
                                return client.inferAsText(model.name(), model.version(), type, zeros, CALL_TIMEOUT)
                                        .thenAccept(result -> worker.driver().profileSample(worker.id(), model.key(),
                                                1, result.serviceTimeNanos(), worker.clock().getAsLong() - start));
                            });
                })
                .handle((ignored, error) -> load ? client.unloadModel(model.name(), model.version(), timeout) : DONE)
                .thenCompose(unloaded -> unloaded.handle((ignored, error) -> null));
    }

    /**
     * The model a replica warms up with: a placed one it holds already, else the smallest placed one
     * (ties by name and version); only models with numeric inputs, whose inputs can be made up. Null
     * when there is none.
     */
    static PlacedModel choose(Collection<PlacedModel> placed, Collection<String> held) {
        PlacedModel best = null;
        for (PlacedModel m : placed) {
            if (WarmUp.zeros(m.inputType(), 1) == null) {
                continue;
            }
            boolean holds = held.contains(m.key());
            boolean bestHeld = best != null && held.contains(best.key());
            if (best == null || holds && !bestHeld || holds == bestHeld && (m.sizeBytes() < best.sizeBytes()
                    || m.sizeBytes() == best.sizeBytes() && m.key().compareTo(best.key()) < 0)) {
                best = m;
            }
        }
        return best;
    }
}

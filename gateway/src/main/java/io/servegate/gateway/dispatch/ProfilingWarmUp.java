package io.servegate.gateway.dispatch;

import io.grpc.Status;
import io.servegate.core.batching.BatchLatencyProfile;
import io.servegate.oip.ModelMetadataResponse;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A single-model replica's warm-up: reads the input the container declares (and holds back a
 * replica that answers it does not serve the registered model version), sends an
 * all-zeros batch of one whose time is no sample (it pays the one-off costs), then measures
 * batches of 1, 2, 4, … so that the scheduler knows what they cost here before it relies on that.
 * A size whose batch costs over {@value #COLD_FACTOR} times the size half as large (twice the
 * smaller batch, with the profiles' outlier margin) is run again and the second run counts: an
 * accelerator's first batch of a new shape may cost hundreds of milliseconds more (autotuning,
 * lazy allocation), once.
 * Only numeric inputs can be made up; others start cold, and their first batch is the warm-up.
 * In a fleet, a gateway that does not schedule the version sends no batch at all
 * ({@link ProfileSharing}): it reads the metadata, which opens the connection, and no more.
 */
final class ProfilingWarmUp implements WarmUp {

    private static final Logger log = LoggerFactory.getLogger(ProfilingWarmUp.class);
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);
    /** A batch costing more than this times the batch half its size is run again (see the class comment). */
    static final double COLD_FACTOR = 2 * BatchLatencyProfile.OUTLIER_FACTOR;
    /** How often a replica that serves another model version than registered is asked again. */
    private static final long RECHECK_SECONDS = 1;

    private final PlacedModel model;
    private final int profileMaxBatch;
    private final ProfileSharing sharing;

    /**
     * @param profileMaxBatch measure batches of 1, 2, 4, … up to this size; 0 measures only a
     *                        batch of one
     * @param sharing         whether this gateway measures the version's replicas
     */
    ProfilingWarmUp(PlacedModel model, int profileMaxBatch, ProfileSharing sharing) {
        this.model = model;
        this.profileMaxBatch = profileMaxBatch;
        this.sharing = sharing;
    }

    @Override
    public CompletableFuture<Void> run(ReplicaWorker worker, List<String> held) {
        return metadataOnceServed(worker, true)
                .handle((md, error) -> {
                    if (error == null) {
                        worker.declaredInput(DeclaredInput.of(md, model.inputType()));
                        warnOfTypeMismatch(worker, md);
                    }
                    // no length declared: any
                    return WarmUp.zeros(model.inputType(), Math.max(1, worker.declaredInput().rowLength()));
                })
                .thenCompose(zeros -> zeros == null ? DONE : sharing.measures(model.name(), model.version())
                        .exceptionally(error -> true)
                        .thenCompose(measures -> !measures ? DONE
                                // the first call pays the container's one-off costs: its time is not a sample
                                : measure(worker, zeros, 1).handle((ignored, error) -> null)
                                        .thenCompose(ignored -> profile(worker, zeros, 1, 0))));
    }

    /**
     * The replica's model metadata. While the replica answers {@code NOT_FOUND} (it serves another
     * model version than registered, a replica added by address; managed ones are checked before
     * they are registered) it is asked again every {@value #RECHECK_SECONDS} s and takes no
     * queries, whose batches would all fail; the log says what differs, once.
     */
    private CompletableFuture<ModelMetadataResponse> metadataOnceServed(ReplicaWorker worker, boolean first) {
        return worker.client().modelMetadata(model.name(), model.version(), Duration.ofSeconds(1))
                .exceptionallyCompose(error -> {
                    Status status = Status.fromThrowable(error);
                    if (status.getCode() != Status.Code.NOT_FOUND || worker.closed()) {
                        return CompletableFuture.failedFuture(error);
                    }
                    if (first) {
                        log.warn("{} answered {} {}: it does not serve the registered model version; it takes no "
                                + "queries until it does", asked(worker), status.getCode(), status.getDescription());
                    }
                    return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(RECHECK_SECONDS,
                            TimeUnit.SECONDS)).thenCompose(ignored -> metadataOnceServed(worker, false));
                });
    }

    /** Says in the log when the replica declares an input its registered type does not travel as. */
    private void warnOfTypeMismatch(ReplicaWorker worker, ModelMetadataResponse md) {
        if (md.getInputsCount() == 1 && !model.inputType().carriedBy(md.getInputs(0).getDatatype())) {
            log.warn("{} declares input '{}' {} {}, but the model is registered with input type '{}' ({})",
                    asked(worker), md.getInputs(0).getName(), md.getInputs(0).getDatatype(),
                    md.getInputs(0).getShapeList(), model.inputType().clipperName(), model.inputType().datatype());
        }
    }

    private String asked(ReplicaWorker worker) {
        return "replica " + worker.id() + " at " + worker.address() + ": ModelMetadata(" + model.name() + ", version "
                + model.version() + ")";
    }

    /** Measures {@code size}, and its double next; {@code previous} is the last size's cost, 0 before any. */
    private CompletableFuture<Void> profile(ReplicaWorker worker, Object zeros, int size, long previous) {
        if (worker.closed() || size > Math.max(1, profileMaxBatch)) {
            return DONE;
        }
        return measure(worker, zeros, size)
                .thenCompose(first -> previous > 0 && first.cost() > COLD_FACTOR * previous
                        ? measure(worker, zeros, size) : CompletableFuture.completedFuture(first))
                .thenApply(timing -> {
                    worker.driver().profileSample(worker.id(), model.key(), size, timing.serviceNanos(),
                            timing.roundTripNanos());
                    return timing.cost();
                })
                .handle((cost, error) -> error == null ? cost : -1L)
                .thenCompose(cost -> cost < 0 ? DONE : profile(worker, zeros, size * 2, cost));
    }

    private CompletableFuture<Timing> measure(ReplicaWorker worker, Object zeros, int size) {
        long start = worker.clock().getAsLong();
        @SuppressWarnings("unchecked")
        TensorType<Object> type = (TensorType<Object>) model.inputType();
        return worker.client().inferAsText(model.name(), model.version(), type, Collections.nCopies(size, zeros),
                        CALL_TIMEOUT)
                .thenApply(result -> new Timing(result.serviceTimeNanos(), worker.clock().getAsLong() - start));
    }

    /** One call's time: the container's own (0 when it reports none) and the round trip. */
    private record Timing(long serviceNanos, long roundTripNanos) {
        long cost() {
            return serviceNanos > 0 ? serviceNanos : roundTripNanos;
        }
    }
}

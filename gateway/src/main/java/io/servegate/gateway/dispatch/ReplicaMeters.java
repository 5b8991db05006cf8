package io.servegate.gateway.dispatch;

import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.servegate.core.scheduling.ModelScheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The meters of one single-model replica, tagged with its model version and id. */
final class ReplicaMeters implements AutoCloseable {

    private final MeterRegistry meters;
    private final List<Meter> own = new ArrayList<>();
    private final DistributionSummary batchSizes;
    private final Tags tags;
    private final Map<Status.Code, Counter> failures = new ConcurrentHashMap<>();
    private final Counter rowsRejected;
    private final Counter splits;

    ReplicaMeters(ReplicaWorker worker, Tags modelTags, SchedulerDriver<ModelScheduler<PendingPrediction>> driver,
            MeterRegistry meters) {
        this.meters = meters;
        String replica = worker.id();
        tags = modelTags.and("replica", replica);
        batchSizes = DistributionSummary.builder("servegate.batch.size").tags(tags)
                .description("Queries per batch sent to a replica").register(meters);
        own.add(batchSizes);
        own.add(Gauge.builder("servegate.queue.length", worker, ReplicaWorker::inFlight).tags(tags)
                .description("Queries sent to a replica whose batch has not returned").register(meters));
        own.add(Gauge.builder("servegate.batch.max.size", driver, d -> d.read(s -> s.maxBatchSize(replica)))
                .tags(tags).description("Largest batch the replica is sent now (AIMD's size under clipper; lower while "
                        + "apps of different tiers share an overloaded version)")
                .register(meters));
        own.add(Gauge.builder("servegate.replica.idle.fraction", driver,
                        d -> d.read(s -> s.idleFraction(replica, d.clock().getAsLong())))
                .tags(tags).description("Share of the last 10 s the replica's container was not running a batch")
                .register(meters));
        own.add(FunctionCounter.builder("servegate.replica.busy", driver, d -> d.read(s -> s.busyNanos(replica)) / 1e9)
                .tags(tags).baseUnit("seconds").description("Container time spent on completed batches")
                .register(meters));
        rowsRejected = Counter.builder("servegate.rows.rejected").tags(tags)
                .description("Queries whose input the container rejected, each answered alone with an error")
                .register(meters);
        own.add(rowsRejected);
        splits = Counter.builder("servegate.batch.splits").tags(tags)
                .description("Failed calls whose queries were split in halves and sent again to find the bad rows")
                .register(meters);
        own.add(splits);
    }

    /** A batch of {@code size} went to the replica. */
    void sent(int size) {
        batchSizes.record(size);
    }

    /** A batch failed with {@code code}: what opened a circuit, when one opens. */
    void failed(Status.Code code) {
        failures.computeIfAbsent(code, c -> Counter.builder("servegate.batch.failures").tags(tags.and("code", c.name()))
                .description("Batches a replica failed, by gRPC status; each is an error for its circuit breaker")
                .register(meters)).increment();
    }

    /** A query's row was rejected by the container (a per-row error, or INVALID_ARGUMENT for it alone). */
    void rowRejected() {
        rowsRejected.increment();
    }

    /** A failed call's queries were split in halves and sent again. */
    void split() {
        splits.increment();
    }

    @Override
    public void close() {
        own.forEach(meters::remove);
        failures.values().forEach(meters::remove);
    }
}

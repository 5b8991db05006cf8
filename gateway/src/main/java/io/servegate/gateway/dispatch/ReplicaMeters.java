package io.servegate.gateway.dispatch;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.servegate.core.scheduling.ModelScheduler;
import java.util.ArrayList;
import java.util.List;

/** The meters of one single-model replica, tagged with its model version and id. */
final class ReplicaMeters implements AutoCloseable {

    private final MeterRegistry meters;
    private final List<Meter> own = new ArrayList<>();
    private final DistributionSummary batchSizes;

    ReplicaMeters(ReplicaWorker worker, Tags modelTags, SchedulerDriver<ModelScheduler<PendingPrediction>> driver,
            MeterRegistry meters) {
        this.meters = meters;
        String replica = worker.id();
        Tags tags = modelTags.and("replica", replica);
        batchSizes = DistributionSummary.builder("servegate.batch.size").tags(tags)
                .description("Queries per batch sent to a replica").register(meters);
        own.add(batchSizes);
        own.add(Gauge.builder("servegate.queue.length", worker, ReplicaWorker::inFlight).tags(tags)
                .description("Queries sent to a replica whose batch has not returned").register(meters));
        own.add(Gauge.builder("servegate.batch.max.size", driver, d -> d.read(s -> s.maxBatchSize(replica)))
                .tags(tags).description("Largest batch the replica is sent now (AIMD's size under clipper)")
                .register(meters));
        own.add(Gauge.builder("servegate.replica.idle.fraction", driver,
                        d -> d.read(s -> s.idleFraction(replica, d.clock().getAsLong())))
                .tags(tags).description("Share of the last 10 s the replica's container was not running a batch")
                .register(meters));
        own.add(FunctionCounter.builder("servegate.replica.busy", driver, d -> d.read(s -> s.busyNanos(replica)) / 1e9)
                .tags(tags).baseUnit("seconds").description("Container time spent on completed batches")
                .register(meters));
    }

    /** A batch of {@code size} went to the replica. */
    void sent(int size) {
        batchSizes.record(size);
    }

    @Override
    public void close() {
        own.forEach(meters::remove);
    }
}

package io.servegate.gateway.dispatch;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.servegate.core.autoscaling.ArrivalEnvelope;
import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.ModelScheduler;
import io.servegate.core.scheduling.Query;
import io.servegate.core.scheduling.RejectReason;
import io.servegate.core.scheduling.SchedulerConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/** The meters of one model version's scheduler, tagged with the model and version. */
final class SchedulerMeters implements DispatchListener {

    /** Batch sizes whose estimate is exported. */
    private static final int[] PROFILED_SIZES = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

    private final MeterRegistry meters;
    private final List<Meter> own = new ArrayList<>();
    private final Timer queueDelay;
    private final Timer latency;
    private final DistributionSummary batchSizes;
    private final Tags tags;
    /** Per app, the model time of its completed batches; registered on the app's first batch. */
    private final Map<String, Counter> modelTime = new ConcurrentHashMap<>();

    SchedulerMeters(Tags tags, SchedulerConfig config, SchedulerDriver<ModelScheduler<PendingPrediction>> driver,
            MeterRegistry meters) {
        this.meters = meters;
        this.tags = tags;
        LongSupplier clock = driver.clock();
        queueDelay = Timer.builder("servegate.scheduler.queue.delay").tags(tags).publishPercentileHistogram()
                .description("Time from a query's arrival to the dispatch of its batch").register(meters);
        latency = Timer.builder("servegate.scheduler.latency").tags(tags).publishPercentileHistogram()
                .description("Time from a query's arrival at the scheduler to its batch's answer, as the capacity model predicts it")
                .register(meters);
        batchSizes = DistributionSummary.builder("servegate.scheduler.batch.size").tags(tags)
                .publishPercentileHistogram().maximumExpectedValue((double) config.maxBatchSize())
                .description("Queries per batch the model's scheduler sent").register(meters);
        own.add(queueDelay);
        own.add(latency);
        own.add(batchSizes);
        own.add(Gauge.builder("servegate.scheduler.queue.length", driver, d -> d.read(ModelScheduler::queued))
                .tags(tags).description("Queries waiting in the model's queue").register(meters));
        own.add(Gauge.builder("servegate.scheduler.info", () -> 1).tags(tags.and("policy", config.policy().id()))
                .description("The model version's scheduling policy").register(meters));
        own.add(Gauge.builder("servegate.profile.overhead", driver, d -> d.read(s -> s.overheadNanos() / 1e9))
                .tags(tags).baseUnit("seconds")
                .description("Transport overhead the scheduler plans with: a low quantile of round trip minus the container's service time")
                .register(meters));
        own.add(Gauge.builder("servegate.scheduler.arrival.rate", driver,
                        d -> d.read(s -> s.arrivalRate(clock.getAsLong())))
                .tags(tags).description("Queries per second arriving at the model's scheduler, over about the last second")
                .register(meters));
        own.add(FunctionCounter.builder("servegate.scheduler.arrivals", driver, d -> d.read(s -> s.arrived()))
                .tags(tags).description("Queries submitted to the model's scheduler").register(meters));
        own.add(FunctionCounter.builder("servegate.scheduler.bad", driver, d -> d.read(s -> s.bad()))
                .tags(tags).description("Queries answered late, failed or with a default: rate(bad) / rate(arrivals) is the bad rate")
                .register(meters));
        own.add(Gauge.builder("servegate.scheduler.idle.fraction", driver,
                        d -> d.read(s -> s.idleFraction(clock.getAsLong())))
                .tags(tags).description("The available replicas' mean idle fraction over the last ten seconds")
                .register(meters));
        for (long window : ArrivalEnvelope.WINDOWS_NANOS) {
            own.add(Gauge.builder("servegate.scheduler.envelope", driver, d -> d.read(
                            s -> s.envelope().maxArrivals(window, ArrivalEnvelope.MAX_LOOKBACK_NANOS, clock.getAsLong())))
                    .tags(tags.and("window", Double.toString(window / 1e9)))
                    .description("The traffic envelope: the most arrivals in any window of this many seconds over the last minute")
                    .register(meters));
        }
        for (RejectReason reason : RejectReason.values()) {
            own.add(FunctionCounter.builder("servegate.scheduler.rejected", driver,
                            d -> d.read(s -> s.rejected(reason)))
                    .tags(tags.and("reason", DispatchFailure.of(reason).tag()))
                    .description("Queries the scheduler answered with the default, by reason").register(meters));
        }
        for (int size : PROFILED_SIZES) {
            if (size > config.maxBatchSize()) {
                break;
            }
            own.add(Gauge.builder("servegate.profile.estimate", driver, d -> d.read(s -> {
                        long nanos = s.estimateNanos(size);
                        return nanos < 0 ? Double.NaN : nanos / 1e9;
                    }))
                    .tags(tags.and("batch_size", Integer.toString(size))).baseUnit("seconds")
                    .description("The latency profile's service-time estimate per batch size").register(meters));
        }
    }

    @Override
    public void sent(Batch<PendingPrediction> batch) {
        batchSizes.record(batch.size());
        for (Query<PendingPrediction> q : batch.queries()) {
            queueDelay.record(Math.max(0, batch.sentAt() - q.arrival()), TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void completed(Batch<PendingPrediction> batch, long serviceNanos, long now) {
        // the container's time, or the round trip where it reports none (as the scheduler counts a replica busy)
        double shareS = (serviceNanos > 0 ? serviceNanos : Math.max(0, now - batch.sentAt())) / 1e9 / batch.size();
        for (Query<PendingPrediction> q : batch.queries()) {
            latency.record(Math.max(0, now - q.arrival()), TimeUnit.NANOSECONDS);
            modelTime.computeIfAbsent(q.tenant().app(), app -> Counter.builder("servegate.model.time")
                    .tags(tags.and("app", app)).baseUnit("seconds")
                    .description("Model time of the completed batches, each batch's shared equally by its queries, "
                            + "per app").register(meters)).increment(shareS);
        }
    }

    @Override
    public void close() {
        own.forEach(meters::remove);
        modelTime.values().forEach(meters::remove);
    }
}

package io.servegate.gateway.dispatch;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.servegate.core.autoscaling.ArrivalEnvelope;
import io.servegate.core.autoscaling.AutoscalerConfig;
import io.servegate.core.autoscaling.ScalingSignals;
import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.ModelScheduler;
import io.servegate.core.scheduling.Query;
import io.servegate.core.scheduling.RejectReason;
import io.servegate.core.scheduling.SchedulerActions;
import io.servegate.core.scheduling.SchedulerConfig;
import io.servegate.core.trace.RunRecorder;
import io.servegate.gateway.query.DefaultReason;
import io.servegate.gateway.query.PredictionException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.function.ToDoubleFunction;
import reactor.core.scheduler.Scheduler;

/**
 * Carries out one model version's {@link ModelScheduler}. Events (a query, a replica's news, a
 * timer) reach the scheduler under this object's lock; the actions it takes are recorded there
 * and carried out once the lock is released (a batch handed to its replica's worker, a default
 * answered, a timer armed), so no I/O and no caller's callback ever runs under the lock. With a
 * {@link RunRecorder}, the events the simulator replays are recorded the same way, as actions,
 * under the name {@code model:version}.
 */
final class ModelDispatch implements SchedulerActions<PendingPrediction>, AutoCloseable {

    /** Batch sizes whose estimate is exported. */
    private static final int[] PROFILED_SIZES = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

    private final String model;
    private final String version;
    private final ModelScheduler<PendingPrediction> scheduler;
    private final LongSupplier clock;
    private final Scheduler timers;
    private final MeterRegistry meters;
    /** Null when the run is not recorded. */
    private final RunRecorder recorder;
    private final String recordedName;
    private final List<Meter> ownMeters = new ArrayList<>();
    private final Timer queueDelay;
    private final Timer latency;
    private final DistributionSummary batchSizes;
    /** Actions the scheduler took during the current event; guarded by {@code this}. */
    private List<Runnable> actions = new ArrayList<>();
    private volatile Map<String, ReplicaWorker> workers = Map.of();

    /** @param recorder records the run for replay, or null */
    ModelDispatch(String model, String version, SchedulerConfig config, LongSupplier clock, Scheduler timers,
            MeterRegistry meters, RunRecorder recorder) {
        this.model = model;
        this.version = version;
        this.clock = clock;
        this.timers = timers;
        this.meters = meters;
        this.recorder = recorder;
        this.recordedName = model + ':' + version;
        this.scheduler = new ModelScheduler<>(recordedName, config, this);
        if (recorder != null) {
            recorder.model(recordedName, config.policy(), config.sloNanos());
        }
        Tags tags = tags();
        queueDelay = Timer.builder("servegate.scheduler.queue.delay").tags(tags).publishPercentileHistogram()
                .description("Time from a query's arrival to the dispatch of its batch").register(meters);
        latency = Timer.builder("servegate.scheduler.latency").tags(tags).publishPercentileHistogram()
                .description("Time from a query's arrival at the scheduler to its batch's answer, as the capacity model predicts it")
                .register(meters);
        batchSizes = DistributionSummary.builder("servegate.scheduler.batch.size").tags(tags)
                .publishPercentileHistogram().maximumExpectedValue((double) config.maxBatchSize())
                .description("Queries per batch the model's scheduler sent").register(meters);
        ownMeters.add(queueDelay);
        ownMeters.add(latency);
        ownMeters.add(batchSizes);
        ownMeters.add(Gauge.builder("servegate.scheduler.queue.length", this, d -> d.read(ModelScheduler::queued))
                .tags(tags).description("Queries waiting in the model's queue").register(meters));
        ownMeters.add(Gauge.builder("servegate.scheduler.info", () -> 1).tags(tags.and("policy", config.policy().id()))
                .description("The model version's scheduling policy").register(meters));
        ownMeters.add(Gauge.builder("servegate.profile.overhead", this, d -> d.read(s -> s.overheadNanos() / 1e9))
                .tags(tags).baseUnit("seconds")
                .description("Transport overhead the scheduler plans with: a low quantile of round trip minus the container's service time")
                .register(meters));
        ownMeters.add(Gauge.builder("servegate.scheduler.arrival.rate", this,
                        d -> d.read(s -> s.arrivalRate(clock.getAsLong())))
                .tags(tags).description("Queries per second arriving at the model's scheduler, over about the last second")
                .register(meters));
        ownMeters.add(FunctionCounter.builder("servegate.scheduler.arrivals", this, d -> d.read(s -> s.arrived()))
                .tags(tags).description("Queries submitted to the model's scheduler").register(meters));
        ownMeters.add(FunctionCounter.builder("servegate.scheduler.bad", this, d -> d.read(s -> s.bad()))
                .tags(tags).description("Queries answered late, failed or with a default: rate(bad) / rate(arrivals) is the bad rate")
                .register(meters));
        ownMeters.add(Gauge.builder("servegate.scheduler.idle.fraction", this,
                        d -> d.read(s -> s.idleFraction(clock.getAsLong())))
                .tags(tags).description("The available replicas' mean idle fraction over the last ten seconds")
                .register(meters));
        for (long window : ArrivalEnvelope.WINDOWS_NANOS) {
            ownMeters.add(Gauge.builder("servegate.scheduler.envelope", this, d -> d.read(
                            s -> s.envelope().maxArrivals(window, ArrivalEnvelope.MAX_LOOKBACK_NANOS, clock.getAsLong())))
                    .tags(tags.and("window", Double.toString(window / 1e9)))
                    .description("The traffic envelope: the most arrivals in any window of this many seconds over the last minute")
                    .register(meters));
        }
        for (RejectReason reason : RejectReason.values()) {
            ownMeters.add(FunctionCounter.builder("servegate.scheduler.rejected", this,
                            d -> d.read(s -> s.rejected(reason)))
                    .tags(tags.and("reason", DefaultReason.of(reason).tag()))
                    .description("Queries the scheduler answered with the default, by reason").register(meters));
        }
        for (int size : PROFILED_SIZES) {
            if (size > config.maxBatchSize()) {
                break;
            }
            ownMeters.add(Gauge.builder("servegate.profile.estimate", this, d -> d.read(s -> {
                        long nanos = s.estimateNanos(size);
                        return nanos < 0 ? Double.NaN : nanos / 1e9;
                    }))
                    .tags(tags.and("batch_size", Integer.toString(size))).baseUnit("seconds")
                    .description("The latency profile's service-time estimate per batch size").register(meters));
        }
    }

    String model() {
        return model;
    }

    String version() {
        return version;
    }

    /** Changes the largest batch the scheduler sends (see {@link ModelScheduler#setMaxBatchSize}); no-op when equal. */
    void setMaxBatchSize(int max) {
        event(now -> scheduler.setMaxBatchSize(max, now));
    }

    /** The largest batch the scheduler sends now. */
    int maxBatchSize() {
        return read(s -> s.maxBatchSize());
    }

    Tags tags() {
        return Tags.of("model", model, "version", version);
    }

    // ---- events ----

    CompletableFuture<String> submit(Object input, long deadline) {
        PendingPrediction p = new PendingPrediction(input);
        event(now -> {
            scheduler.submit(recordedName, p, deadline, now);
            if (recorder != null) {
                actions.add(() -> recorder.arrival(recordedName, now, deadline));
            }
        });
        return p.result;
    }

    void add(ReplicaWorker worker) {
        Map<String, ReplicaWorker> next = new HashMap<>(workers);
        next.put(worker.replica().id(), worker);
        workers = Map.copyOf(next);
        event(now -> {
            scheduler.addReplica(worker.replica().id(), 1, now);
            if (recorder != null) {
                actions.add(() -> recorder.replica(recordedName, worker.replica().id(), 1, now));
            }
        });
    }

    void remove(ReplicaWorker worker) {
        Map<String, ReplicaWorker> next = new HashMap<>(workers);
        next.remove(worker.replica().id(), worker);
        workers = Map.copyOf(next);
        event(now -> {
            scheduler.removeReplica(worker.replica().id(), now);
            if (recorder != null) {
                actions.add(() -> recorder.removed(recordedName, worker.replica().id(), now));
            }
        });
    }

    Collection<ReplicaWorker> workers() {
        return workers.values();
    }

    void availability(String replica, boolean available) {
        event(now -> scheduler.setAvailable(replica, available, now));
    }

    void profileSample(String replica, int size, long serviceNanos, long roundTripNanos) {
        event(now -> scheduler.profileSample(replica, recordedName, size, serviceNanos, roundTripNanos, now));
    }

    void completed(Batch<PendingPrediction> batch, long serviceNanos) {
        event(now -> {
            actions.add(() -> {
                for (Query<PendingPrediction> q : batch.queries()) {
                    latency.record(Math.max(0, now - q.arrival()), TimeUnit.NANOSECONDS);
                }
            });
            scheduler.batchCompleted(batch, serviceNanos, now);
            if (recorder != null) {
                actions.add(() -> recorder.batch(recordedName, batch.replica(), batch.sentAt(), batch.size(),
                        serviceNanos, now - batch.sentAt()));
            }
        });
    }

    /**
     * A batch failed, or part of it: the queries of {@code retry} go back to the queue if they may,
     * the others of them fail with {@code error}.
     */
    void failed(Batch<PendingPrediction> batch, Collection<Query<PendingPrediction>> retry, PredictionException error) {
        event(now -> {
            for (Query<PendingPrediction> q : scheduler.batchFailed(batch, retry, now)) {
                actions.add(() -> q.payload().result.completeExceptionally(error));
            }
        });
    }

    // ---- actions ----

    @Override
    public void send(Batch<PendingPrediction> batch) {
        actions.add(() -> {
            batchSizes.record(batch.size());
            for (Query<PendingPrediction> q : batch.queries()) {
                queueDelay.record(Math.max(0, batch.sentAt() - q.arrival()), TimeUnit.NANOSECONDS);
            }
            ReplicaWorker worker = workers.get(batch.replica());
            if (worker == null) {
                failed(batch, batch.queries(), new PredictionException(DefaultReason.NO_REPLICA,
                        "replica " + batch.replica() + " was removed"));
            } else {
                worker.send(batch);
            }
        });
    }

    @Override
    public void reject(Query<PendingPrediction> query, RejectReason reason) {
        actions.add(() -> query.payload().result.completeExceptionally(new PredictionException(
                DefaultReason.of(reason), "model " + model + ":" + version)));
    }

    @Override
    public void wakeAt(long nanos) {
        // every request gets its timer: the scheduler asks only when its next wake-up moves
        // earlier or the last one came due, and a timer that fires early is harmless
        actions.add(() -> timers.schedule(() -> event(scheduler::timer),
                Math.max(0, nanos - clock.getAsLong()), TimeUnit.NANOSECONDS));
    }

    private void event(LongConsumer event) {
        List<Runnable> todo;
        synchronized (this) {
            event.accept(clock.getAsLong());
            if (actions.isEmpty()) {
                return;
            }
            todo = actions;
            actions = new ArrayList<>();
        }
        for (Runnable action : todo) {
            action.run();
        }
    }

    // ---- reads, for metrics and the admin API ----

    synchronized <T> T read(Function<ModelScheduler<PendingPrediction>, T> reader) {
        return reader.apply(scheduler);
    }

    ModelSignals signals() {
        return read(s -> {
            long now = clock.getAsLong();
            return new ModelSignals(s.arrivalRate(now), s.envelope().envelope(ArrivalEnvelope.MAX_LOOKBACK_NANOS, now),
                    s.arrived(), s.bad(), s.idleFraction(now), s.queued(), s.availableReplicas());
        });
    }

    ScalingSignals scalingSignals(int replicas, AutoscalerConfig config) {
        return read(s -> ScalingSignals.read(s, replicas, config, clock.getAsLong()));
    }

    <T> ToDoubleFunction<T> replicaIdleFraction(String replica) {
        return ignored -> read(s -> s.idleFraction(replica, clock.getAsLong()));
    }

    @Override
    public void close() {
        ownMeters.forEach(meters::remove);
    }
}

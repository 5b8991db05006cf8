package io.servegate.gateway.dispatch;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.servegate.core.scheduling.MultiModelScheduler;
import io.servegate.core.scheduling.RejectReason;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The meters of one pool of multi-model replicas, tagged with the pool's name. */
final class PoolMeters implements DispatchListener {

    private final MeterRegistry meters;
    private final List<Meter> own = new ArrayList<>();
    private final Timer loadTime;

    PoolMeters(String pool, SchedulerDriver<MultiModelScheduler<PendingPrediction>> driver, MeterRegistry meters) {
        this.meters = meters;
        Tags tags = Tags.of("pool", pool);
        loadTime = Timer.builder("servegate.pool.load.time").tags(tags).publishPercentileHistogram()
                .description("How long a replica of the pool took to load a model (RepositoryModelLoad round trip)")
                .register(meters);
        own.add(loadTime);
        own.add(FunctionCounter.builder("servegate.pool.arrivals", driver, d -> d.read(s -> s.arrived()))
                .tags(tags).description("Queries submitted to the pool's scheduler").register(meters));
        own.add(FunctionCounter.builder("servegate.pool.cold.starts", driver, d -> d.read(s -> s.coldStarts()))
                .tags(tags).description("Queries that arrived when no replica of the pool held their model")
                .register(meters));
        own.add(FunctionCounter.builder("servegate.pool.loads", driver, d -> d.read(s -> s.loads()))
                .tags(tags).description("Model loads the pool's scheduler sent").register(meters));
        own.add(FunctionCounter.builder("servegate.pool.evictions", driver, d -> d.read(s -> s.evictions()))
                .tags(tags).description("Models unloaded to make room for another").register(meters));
        own.add(Gauge.builder("servegate.pool.queue.length", driver, d -> d.read(s -> s.queued()))
                .tags(tags).description("Queries waiting in the pool, all models together").register(meters));
        for (RejectReason reason : RejectReason.values()) {
            own.add(FunctionCounter.builder("servegate.pool.rejected", driver, d -> d.read(s -> s.rejected(reason)))
                    .tags(tags.and("reason", DispatchFailure.of(reason).tag()))
                    .description("Queries the pool's scheduler answered with the default, by reason").register(meters));
        }
    }

    @Override
    public void loaded(long tookNanos) {
        loadTime.record(tookNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void close() {
        own.forEach(meters::remove);
    }
}

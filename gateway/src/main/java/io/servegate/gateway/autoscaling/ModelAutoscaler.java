package io.servegate.gateway.autoscaling;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.servegate.core.autoscaling.Autoscaler;
import io.servegate.core.autoscaling.AutoscalerConfig;
import io.servegate.core.autoscaling.ScalingDecision;
import io.servegate.core.autoscaling.ScalingSignals;
import io.servegate.gateway.containers.Backoff;
import io.servegate.gateway.containers.ContainerManager;
import io.servegate.gateway.dispatch.ReplicaPool;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One model version's autoscaler in the gateway: each tick it reads the scheduler's signals,
 * asks the core's {@link Autoscaler}, and carries a change out through the
 * {@link ContainerManager}, one action at a time. A failed action is retried with backoff
 * until it succeeds or a newer decision replaces it; both are kept for {@code get_autoscaling}.
 * Ticks and action outcomes arrive on different threads: state is guarded by {@code this}.
 */
final class ModelAutoscaler {

    private static final Logger LOG = LoggerFactory.getLogger(ModelAutoscaler.class);

    final String model;
    final String version;
    private final Autoscaler autoscaler;
    private final ReplicaPool pool;
    private final ContainerManager containers;
    private final Backoff backoff;
    private final int kept;
    private final ArrayDeque<AutoscalingView.Entry> decisions = new ArrayDeque<>();
    private final AtomicInteger replicas;
    private final MeterRegistry meters;
    private final LongSupplier clock;
    private final Counter failures;
    private boolean acting;
    /** A change that failed and is to be retried; null when none. */
    private ScalingDecision retry;
    private long retryAt;
    private int failuresInARow;
    private String lastError;
    private volatile boolean closed;

    ModelAutoscaler(String model, String version, AutoscalerConfig config, int replicas, ReplicaPool pool,
            ContainerManager containers, Backoff backoff, int kept, MeterRegistry meters, LongSupplier clock) {
        this.model = model;
        this.version = version;
        this.autoscaler = new Autoscaler(config);
        this.pool = pool;
        this.containers = containers;
        this.backoff = backoff;
        this.kept = kept;
        this.meters = meters;
        this.clock = clock;
        this.replicas = meters.gauge("servegate.autoscaler.replicas", tags(), new AtomicInteger(replicas));
        this.failures = Counter.builder("servegate.autoscaler.failures").tags(tags())
                .description("Scale actions the container manager refused or failed").register(meters);
    }

    AutoscalerConfig config() {
        return autoscaler.config();
    }

    /** One tick. */
    synchronized void tick() {
        long now = clock.getAsLong();
        if (acting || closed) {
            return;
        }
        if (retry != null) {
            if (now >= retryAt) {
                act(retry);
            }
            return;
        }
        ScalingSignals signals = pool.scalingSignals(model, version, replicas.get(), autoscaler.config());
        ScalingDecision d = autoscaler.decide(signals != null ? signals : ScalingSignals.none(replicas.get(), now));
        if (d != null) {
            Counter.builder("servegate.autoscaler.decisions").tags(tags().and("reason", d.reason().id(),
                            "direction", d.up() ? "up" : "down"))
                    .description("Changes of the replica count the autoscaler decided").register(meters).increment();
            LOG.info("autoscaling {}:{} from {} to {} replicas ({}): {}", model, version, d.from(), d.to(),
                    d.reason().id(), d.detail());
            act(d);
        }
    }

    /** Carries {@code d} out; called under the lock. */
    private void act(ScalingDecision d) {
        acting = true;
        record(d, "pending");
        containers.setReplicas(model, version, d.to()).subscribe(
                deployment -> done(d, deployment.desiredReplicas(), null),
                error -> done(d, -1, error));
    }

    private synchronized void done(ScalingDecision d, int desired, Throwable error) {
        acting = false;
        if (error == null) {
            replicas.set(desired);
            retry = null;
            failuresInARow = 0;
            replace(d, "applied");
            return;
        }
        failures.increment();
        lastError = error.getMessage();
        retry = d;
        retryAt = clock.getAsLong() + backoff.delay(failuresInARow).toNanos();
        failuresInARow++;
        replace(d, "failed: " + error.getMessage() + " (retry " + failuresInARow + " in "
                + backoff.delay(failuresInARow - 1).toMillis() + " ms)");
        LOG.warn("autoscaling {}:{} to {} replicas failed ({} in a row), retrying: {}", model, version, d.to(),
                failuresInARow, error.getMessage());
    }

    private void record(ScalingDecision d, String outcome) {
        if (!decisions.isEmpty() && decisions.peekLast().decision() == d) {
            replace(d, outcome);
            return;
        }
        decisions.addLast(new AutoscalingView.Entry(d, System.currentTimeMillis(), outcome));
        while (decisions.size() > kept) {
            decisions.removeFirst();
        }
    }

    private void replace(ScalingDecision d, String outcome) {
        AutoscalingView.Entry last = decisions.pollLast();
        decisions.addLast(new AutoscalingView.Entry(d, last == null ? System.currentTimeMillis() : last.atEpochMillis(), outcome));
    }

    /** What {@code get_autoscaling} shows of it. */
    synchronized AutoscalingView view() {
        return new AutoscalingView(model, version, autoscaler.config(), replicas.get(), autoscaler.lastBadRate(), acting,
                retry == null ? null : retry.to(), failuresInARow, lastError, List.copyOf(decisions));
    }

    void close() {
        closed = true;
        meters.find("servegate.autoscaler.replicas").tags(tags()).meters().forEach(meters::remove);
        meters.find("servegate.autoscaler.failures").tags(tags()).meters().forEach(meters::remove);
        meters.find("servegate.autoscaler.decisions").tags(tags()).meters().forEach(meters::remove);
    }

    private Tags tags() {
        return Tags.of("model", model, "version", version);
    }
}

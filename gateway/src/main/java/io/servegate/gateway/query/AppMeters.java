package io.servegate.gateway.query;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.servegate.core.scheduling.Priority;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One app's query meters, looked up once: building and registering a meter on every query (a
 * tag sort and a registry lookup each time) cost more CPU than the rest of the query path's
 * bookkeeping together.
 */
final class AppMeters {

    private final String app;
    private final MeterRegistry registry;
    private final Timer predictions;
    private final Timer defaults;
    private final Counter late;
    private final Map<DefaultReason, Counter> defaultsByReason = new ConcurrentHashMap<>(new EnumMap<>(DefaultReason.class));
    private volatile Counter rejected;
    private volatile Counter shed;
    private volatile Counter inputRejected;

    AppMeters(String app, MeterRegistry registry) {
        this.app = app;
        this.registry = registry;
        this.predictions = latency(app, false, registry);
        this.defaults = latency(app, true, registry);
        this.late = Counter.builder("servegate.answers.late").tag("app", app)
                .description("Answers that left the query path after the app's SLO").register(registry);
    }

    private static Timer latency(String app, boolean isDefault, MeterRegistry registry) {
        return Timer.builder("servegate.request.latency").tag("app", app).tag("default", Boolean.toString(isDefault))
                .description("Query latency from arrival to answer").register(registry);
    }

    void answered(boolean isDefault, long tookNanos, boolean afterSlo) {
        (isDefault ? defaults : predictions).record(tookNanos, TimeUnit.NANOSECONDS);
        if (afterSlo) {
            late.increment();
        }
    }

    void defaulted(DefaultReason reason) {
        defaultsByReason.computeIfAbsent(reason, r -> Counter.builder("servegate.defaults").tag("app", app)
                .tag("reason", r.tag()).description("Queries answered with the app's default output")
                .register(registry)).increment();
    }

    /** A query its model's scheduler shed for higher tiers or other apps' fair shares, whether defaulted or rejected. */
    void shed(Priority priority) {
        Counter c = shed;
        if (c == null) {
            c = Counter.builder("servegate.shed").tag("app", app).tag("priority", priority.wireName())
                    .description("Queries shed at once because their model, over capacity, served higher tiers "
                            + "or other apps' fair shares first").register(registry);
            shed = c;
        }
        c.increment();
    }

    void rejected() {
        Counter c = rejected;
        if (c == null) {
            c = Counter.builder("servegate.rejected").tag("app", app)
                    .description("Queries rejected with 503 because their model's queue was full").register(registry);
            rejected = c;
        }
        c.increment();
    }

    void inputRejected() {
        Counter c = inputRejected;
        if (c == null) {
            c = Counter.builder("servegate.input.rejected").tag("app", app)
                    .description("Queries answered 400 because the model container rejected their input")
                    .register(registry);
            inputRejected = c;
        }
        c.increment();
    }
}

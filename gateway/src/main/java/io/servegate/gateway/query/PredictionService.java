package io.servegate.gateway.query;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.opentelemetry.context.Scope;
import io.servegate.core.cache.CacheKey;
import io.servegate.core.cache.EncodedInput;
import io.servegate.core.cache.PredictionCache;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.dispatch.DeclaredInput;
import io.servegate.gateway.dispatch.DispatchException;
import io.servegate.gateway.dispatch.Dispatcher;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.tracing.QueryTrace;
import io.servegate.gateway.tracing.QueryTracing;
import io.servegate.gateway.tracing.RequestTrace;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * The query path below the API: cache, then the model version's replicas, under a hard
 * deadline. A query never answers late: at its deadline it gets its app's default output, and a
 * prediction that arrives afterwards only fills the cache. When the gateway's own timers run late
 * ({@link #shedding}), a query whose deadline timer would fire too late is answered at once, as
 * if its model were overloaded: its app's overload response.
 */
public final class PredictionService {

    /** The {@link Context} key of {@link #timedOn}. */
    private static final Object EVENT_LOOP = new Object();

    private final PredictionCache cache;
    private final Dispatcher dispatcher;
    private final LongSupplier clock;
    private final MeterRegistry meters;
    private final ConcurrentMap<String, AppMeters> appMeters = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, ModelMeters> modelMeters = new ConcurrentHashMap<>();
    private final Timer deadlineLag;

    private final long marginNanos;
    private final Scheduler deadlineTimer;
    private final Scheduler defaults;
    /** Null: no shedding on the timers' lag. */
    private volatile TimerLag lag;
    private volatile QueryTracing tracing = QueryTracing.OFF;

    /**
     * @param deadlineMargin how long before the SLO the default is sent, for the answer's own way
     *     out (serialisation, the socket); zero answers exactly at the SLO
     * @param deadlineTimer  where query deadlines are timed unless their context names their
     *     request's event loop ({@link #timedOn}): a thread that does nothing else in production
     * @param defaults       where such a deadline's default answer is made and sent once it fired,
     *     so that slow work there never holds up other deadlines
     */
    public PredictionService(PredictionCache cache, Dispatcher dispatcher, LongSupplier clock, MeterRegistry meters,
            Duration deadlineMargin, Scheduler deadlineTimer, Scheduler defaults) {
        this.defaults = defaults;
        this.marginNanos = deadlineMargin.toNanos();
        this.deadlineTimer = deadlineTimer;
        this.cache = cache;
        this.dispatcher = dispatcher;
        this.clock = clock;
        this.meters = meters;
        this.deadlineLag = Timer.builder("servegate.deadline.lag")
                .description("How long after its due time a query's deadline timer ran: the gateway's own "
                        + "scheduling delay (CPU starvation, GC pauses), which makes defaults late")
                .publishPercentileHistogram().register(meters);
    }

    /**
     * Sheds queries while {@code lag} says the timers run too late for them.
     *
     * @return this service
     */
    public PredictionService shedding(TimerLag lag) {
        this.lag = lag;
        return this;
    }

    /**
     * Traces each prediction with {@code tracing}: a span per model version asked, under the
     * request's span, and the defaults on the request's span.
     *
     * @return this service
     */
    public PredictionService tracing(QueryTracing tracing) {
        this.tracing = tracing;
        return this;
    }

    /** How predictions are traced ({@link QueryTracing#OFF}: not at all). */
    public QueryTracing tracing() {
        return tracing;
    }

    /**
     * Predicts one input for an app with the given model version, answering by
     * {@code arrivalNanos + app SLO}.
     */
    public Mono<Prediction> predict(Application app, String model, String version, TensorType<?> type, Object input,
            long arrivalNanos) {
        long deadline = deadline(app, arrivalNanos);
        RequestTrace request = tracing.on() ? RequestTrace.current() : null;
        Mono<Prediction> answer = model == null || version == null
                ? Mono.error(new PredictionException(DefaultReason.NO_MODEL,
                        model == null ? "app " + app.name() : "model " + model + " has no current version"))
                : infer(model, version, input, encode(type, input), deadline, app.tenant());
        return answer
                .onErrorResume(PredictionException.class, e -> failed(app, e, request))
                .doOnNext(request == null ? p -> record(app, model, version, p, arrivalNanos)
                        : p -> request.recording(() -> record(app, model, version, p, arrivalNanos)));
    }

    /**
     * The answer to an app's query that got no prediction: an error where the app (explicit
     * rejection of overload) or the input (rejected by the container: the client's error) calls
     * for one, else the app's default. Every kind of app answers failures through this;
     * {@code request} (the request's trace, or null) records which.
     */
    Mono<Prediction> failed(Application app, PredictionException e, RequestTrace request) {
        if (e.reason() == DefaultReason.SHED) {
            meters(app).shed(app.priority());
        }
        if (overloadRejected(app, e)) {
            if (request != null) {
                request.overloadRejected(e.getMessage());
            }
            return Mono.error(new OverloadRejectedException(app.name(), e.getMessage()));
        }
        if (inputRejected(app, e)) {
            return Mono.error(new InputRejectedException(e.getMessage()));
        }
        if (request != null) {
            request.defaulted(e.reason().name(), e.getMessage());
        }
        return Mono.just(defaultFor(app, e));
    }

    /**
     * Times the deadlines of the queries subscribed with this context on {@code eventLoop}, the
     * Netty event loop their request arrived on, and makes their defaults there. Every answer is
     * written by that loop anyway, so timing there adds no thread to the answer's path and saves
     * two hand-offs per default (deadline thread, parallel worker, loop): about 10 % less gateway
     * CPU per query in the aimd benchmark (four side-by-side pairs on two shared cores); how
     * often timers ran late was no different within that machine's noise.
     */
    public static Context timedOn(Context context, Scheduler eventLoop) {
        return context.put(EVENT_LOOP, eventLoop);
    }

    /** Whether a model version has a replica that takes queries now. */
    public boolean ready(String model, String version) {
        return dispatcher.ready(model, version);
    }

    /**
     * The values (numbers, or bytes of a {@code bytes} input) one input of a model version must
     * have, as its containers declare, or -1 when unknown: the API rejects other lengths itself,
     * before they reach a batch.
     */
    public int inputLength(String model, String version) {
        return dispatcher.declaredInput(model, version).rowLength();
    }

    /** The input a model version's containers declare (datatype and shape), merged across them. */
    public DeclaredInput declaredInput(String model, String version) {
        return dispatcher.declaredInput(model, version);
    }

    /** When a query of {@code app} that arrived at {@code arrivalNanos} must be answered. */
    long deadline(Application app, long arrivalNanos) {
        return arrivalNanos + TimeUnit.MICROSECONDS.toNanos(app.latencySloMicros()) - marginNanos;
    }

    /**
     * Predicts one input for a model version with no app around it (the OIP REST API): the
     * same cache and batching, failing with {@link PredictionException} at the deadline.
     */
    public Mono<String> infer(String model, String version, TensorType<?> type, Object input, Duration timeout) {
        return infer(model, version, type, input, timeout, Tenant.DEFAULT);
    }

    /** As {@link #infer(String, String, TensorType, Object, Duration)}, scheduled for {@code tenant}'s app. */
    public Mono<String> infer(String model, String version, TensorType<?> type, Object input, Duration timeout,
            Tenant tenant) {
        long deadline = clock.getAsLong() + timeout.toNanos();
        return infer(model, version, input, encode(type, input), deadline, tenant).map(Prediction::output);
    }

    /** One model version's output by {@code deadline}, failing with {@link PredictionException}. */
    Mono<Prediction> infer(String model, String version, TensorType<?> type, Object input, long deadline) {
        return infer(model, version, input, encode(type, input), deadline);
    }

    /** {@link #infer(String, String, TensorType, Object, long)} of an input encoded once for several models. */
    Mono<Prediction> infer(String model, String version, Object input, EncodedInput encoded, long deadline) {
        return infer(model, version, input, encoded, deadline, Tenant.DEFAULT);
    }

    /** As {@link #infer(String, String, Object, EncodedInput, long)}, scheduled for {@code tenant}'s app (its tier and weight). */
    Mono<Prediction> infer(String model, String version, Object input, EncodedInput encoded, long deadline,
            Tenant tenant) {
        QueryTrace trace = tracing.startQuery(model, version);
        if (trace == null) {
            return dispatch(model, version, input, encoded, deadline, tenant, null);
        }
        Mono<Prediction> answer;
        try (Scope ignored = trace.makeCurrent()) {
            answer = dispatch(model, version, input, encoded, deadline, tenant, trace);
        }
        return answer.doOnNext(p -> trace.answered())
                .doOnError(e -> trace.failed(e instanceof PredictionException p ? p.reason().name()
                        : DefaultReason.CONTAINER_ERROR.name(), e.getMessage()))
                .doOnCancel(() -> trace.failed("CANCELLED", "the request went away before the answer"));
    }

    /** The prediction, {@code trace} (or null) told how the cache served it. */
    private Mono<Prediction> dispatch(String model, String version, Object input, EncodedInput encoded, long deadline,
            Tenant tenant, QueryTrace trace) {
        long left = deadline - clock.getAsLong();
        if (left <= 0) {
            return Mono.error(new PredictionException(DefaultReason.DEADLINE, null));
        }
        TimerLag timerLag = lag;
        if (timerLag != null && timerLag.sheds(left)) {
            return Mono.error(new PredictionException(DefaultReason.OVERLOADED, "its timers run late"));
        }
        CacheKey key = new CacheKey(model, version, encoded);
        CompletableFuture<String> output;
        if (trace == null) {
            output = cache.get(key, k -> dispatcher.submit(model, version, input, deadline, tenant));
        } else {
            boolean[] missed = new boolean[1];
            output = cache.get(key, k -> {
                missed[0] = true;
                return dispatcher.submit(model, version, input, deadline, tenant);
            });
            trace.cache(missed[0] ? "miss" : output.isDone() ? "hit" : "pending");
        }
        // The future is shared with other queries: a timeout here must not cancel it, so a late result
        // still fills the cache. Failures become values first, so that one arriving after the timeout
        // is not an error dropped by a cancelled subscriber.
        CompletableFuture<Object> outcome = output.handle((value, error) -> error == null ? value : failure(error));
        if (outcome.isDone()) {
            // a cache hit: answered now, so no deadline timer to schedule and cancel
            return answer(outcome.join());
        }
        return Mono.deferContextual(context -> {
            Mono<PredictionException> atDeadline = Mono.fromSupplier(() -> {
                deadlineLag.record(Math.max(0, clock.getAsLong() - deadline), TimeUnit.NANOSECONDS);
                return new PredictionException(DefaultReason.DEADLINE, null);
            });
            Scheduler eventLoop = context.getOrDefault(EVENT_LOOP, null);
            // timed from now, not from assembly: dispatching above may have sent a batch
            Duration wait = Duration.ofNanos(Math.max(0, deadline - clock.getAsLong()));
            return eventLoop != null
                    ? Mono.fromFuture(outcome, true).timeout(wait, atDeadline, eventLoop)
                    : Mono.fromFuture(outcome, true).timeout(wait, atDeadline.publishOn(defaults), deadlineTimer);
        }).flatMap(PredictionService::answer);
    }

    private static Mono<Prediction> answer(Object outcome) {
        return outcome instanceof PredictionException e ? Mono.error(e) : Mono.just(Prediction.of((String) outcome));
    }

    private static PredictionException failure(Throwable error) {
        Throwable cause = DispatchException.unwrap(error);
        return cause instanceof DispatchException e ? new PredictionException(DefaultReason.of(e.failure()), e.detail())
                : cause instanceof PredictionException e ? e
                : new PredictionException(DefaultReason.CONTAINER_ERROR, cause.getMessage());
    }

    /** The input as the prediction cache keys it. */
    @SuppressWarnings("unchecked")
    public static <T> EncodedInput encode(TensorType<T> type, Object input) {
        if (input instanceof byte[] bytes) {
            // a bytes input is its own key: no encoding and no copy of a large image
            return new EncodedInput(bytes);
        }
        return new EncodedInput(type.encode(List.of((T) input)).raw().toByteArray());
    }

    /** An app that asked for explicit rejection gets it when its queues are full or it is shed; that is counted too. */
    private boolean overloadRejected(Application app, PredictionException e) {
        if ((e.reason() != DefaultReason.OVERLOADED && e.reason() != DefaultReason.SHED)
                || app.overloadResponse() != Application.OverloadResponse.REJECT) {
            return false;
        }
        meters(app).rejected();
        return true;
    }

    /** A query whose input the container rejected gets a 400, not the default; it is counted as such. */
    private boolean inputRejected(Application app, PredictionException e) {
        if (e.reason() != DefaultReason.INPUT_REJECTED) {
            return false;
        }
        meters(app).inputRejected();
        return true;
    }

    Prediction defaultFor(Application app, PredictionException e) {
        meters(app).defaulted(e.reason());
        return Prediction.ofDefault(app.defaultOutput(), e.reason(), e.getMessage());
    }

    /** Records an answer of an app whose queries may go to several models (selection policies). */
    void record(Application app, Prediction p, long arrivalNanos) {
        record(app, null, null, p, arrivalNanos);
    }

    void record(Application app, String model, String version, Prediction p, long arrivalNanos) {
        long took = clock.getAsLong() - arrivalNanos;
        // the deadline is the product's promise: every miss is counted, not averaged away
        boolean afterSlo = took > TimeUnit.MICROSECONDS.toNanos(app.latencySloMicros());
        meters(app).answered(p.isDefault(), took, afterSlo);
        if (model != null && version != null) {
            String key = model + ':' + version;
            ModelMeters m = modelMeters.get(key);
            if (m == null) {
                m = modelMeters.computeIfAbsent(key, k -> new ModelMeters(model, version, meters));
            }
            m.answered(p.isDefault(), afterSlo);
        }
    }

    private AppMeters meters(Application app) {
        AppMeters m = appMeters.get(app.name());
        return m != null ? m : appMeters.computeIfAbsent(app.name(), name -> new AppMeters(name, meters));
    }
}

package io.servegate.gateway.dispatch;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.grpc.Status;
import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.Load;
import io.servegate.core.scheduling.Query;
import io.servegate.gateway.tracing.BatchTrace;
import io.servegate.gateway.tracing.QueryTrace;
import io.servegate.oip.client.ContainerClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC side of one replica: it waits for the container's ServerReady, warms it up
 * ({@link WarmUp}) before it takes queries, then carries out what its scheduler binds to it:
 * batches as one OIP ModelInfer call each (one per input length), and, on a replica that
 * {@linkplain #loadsModels loads models}, RepositoryModelLoad and RepositoryModelUnload. It decides
 * nothing: it reports what happened (a completed batch and the container's service time, a
 * failure, a change of availability, the models a container holds) back to its
 * {@link SchedulerDriver}. Batches to a replica whose circuit breaker is open fail at once; a
 * transport failure takes the replica out until ServerReady answers again.
 *
 * <p>The breaker judges errors, not slowness. A batch that answers late is a latency sample for
 * the scheduler (its queries got their defaults at the deadline already) and a success for the
 * breaker; a call times out, and counts as an error, only once it has outlived its latest
 * deadline by the minimum batch timeout. A replica that answers a batch while its breaker is open
 * closes it: it is reachable and working, only slow, and the scheduler's profile says how slow.
 * A row the container rejects is the client's error, not the replica's ({@link IsolatingCall}).
 *
 * <p>Order matters on a replica that loads models: a load or unload starts once everything sent
 * before it has returned, and a batch once the loads and unloads sent before it have (batches
 * themselves may overlap). Every call also waits for its gate, which the driver opens once its
 * lock is released, so that no call starts under that lock.
 */
final class ReplicaWorker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReplicaWorker.class);
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
    /**
     * A load or unload may take this many times the model's profiled load time, and at least
     * {@link #MIN_REPOSITORY_TIMEOUT}, before it is failed: the replica runs one thing at a time,
     * so a load that hangs would otherwise hold everything sent after it.
     */
    private static final int REPOSITORY_TIMEOUT_FACTOR = 10;
    private static final Duration MIN_REPOSITORY_TIMEOUT = Duration.ofSeconds(1);

    private final String id;
    private final String address;
    private final boolean loadsModels;
    private final SchedulerDriver<?> driver;
    private final ContainerClient client;
    private final CircuitBreaker breaker;
    private final WarmUp warmUp;
    private final LongSupplier clock;
    private final reactor.core.scheduler.Scheduler timers;
    private final Duration minBatchTimeout;
    /** Null: the replica exports no meters of its own (a pool's). */
    private final ReplicaMeters meters;
    /** Queries sent here whose batch has not returned. */
    private final AtomicInteger inFlight = new AtomicInteger();
    /** The last load or unload sent; guarded by {@code this}. */
    private CompletableFuture<Void> barrier = DONE;
    /** Everything sent, on a replica that loads models; guarded by {@code this}. */
    private CompletableFuture<Void> tail = DONE;
    private volatile boolean ready;
    /** Whether a ServerReady poll loop runs: one at a time, however many calls failed. */
    private final AtomicBoolean probing = new AtomicBoolean();
    /** Whether the warm-up ran: it runs before the replica first takes queries, not after each recovery. */
    private volatile boolean warmedUp;
    /** Whether the warm-up ran to its end (the replica may have become unavailable since). */
    private volatile boolean warm;
    private volatile boolean closed;
    /** The input the container's metadata declares; unknown until the warm-up reads it. */
    private volatile DeclaredInput declaredInput = DeclaredInput.UNKNOWN;
    /** The last batch failure, for the log line when the circuit opens. */
    private volatile String lastFailure = "";

    /**
     * @param loadsModels whether the replica holds several model versions and loads and unloads
     *                    them on the scheduler's word; if not, it serves one, held from the start
     * @param breaker     fails batches at once while open; a disabled one never opens
     * @param meters      makes the replica's own meters, or null for none
     */
    ReplicaWorker(String id, String address, boolean loadsModels, SchedulerDriver<?> driver, ContainerClient client,
            CircuitBreaker breaker, WarmUp warmUp, reactor.core.scheduler.Scheduler timers, Duration minBatchTimeout,
            Function<ReplicaWorker, ReplicaMeters> meters) {
        this.id = id;
        this.address = address;
        this.loadsModels = loadsModels;
        this.driver = driver;
        this.client = client;
        this.breaker = breaker;
        this.warmUp = warmUp;
        this.clock = driver.clock();
        this.timers = timers;
        this.minBatchTimeout = minBatchTimeout;
        this.meters = meters == null ? null : meters.apply(this);
        breaker.getEventPublisher().onStateTransition(e -> {
            if (e.getStateTransition().getToState() == CircuitBreaker.State.OPEN) {
                CircuitBreaker.Metrics m = breaker.getMetrics();
                log.warn("replica {} ({}): circuit open, {} of its last {} batches failed; the last: {}", id, address,
                        m.getNumberOfFailedCalls(), m.getNumberOfBufferedCalls(), lastFailure);
            }
            report();
        });
    }

    String id() {
        return id;
    }

    String address() {
        return address;
    }

    /** Whether its warm-up ran to its end: the scheduler has what the warm-up would have told it. */
    boolean warm() {
        return warm;
    }

    /** Whether the scheduler may send batches here: ready, not closed, circuit not open. */
    boolean available() {
        CircuitBreaker.State state = breaker.getState();
        return ready && !closed && state != CircuitBreaker.State.OPEN && state != CircuitBreaker.State.FORCED_OPEN;
    }

    int inFlight() {
        return inFlight.get();
    }

    DeclaredInput declaredInput() {
        return declaredInput;
    }

    // ---- what a warm-up uses ----

    ContainerClient client() {
        return client;
    }

    SchedulerDriver<?> driver() {
        return driver;
    }

    LongSupplier clock() {
        return clock;
    }

    boolean closed() {
        return closed;
    }

    /** The input the container declares, so that the gateway can reject inputs it would refuse itself. */
    void declaredInput(DeclaredInput declared) {
        declaredInput = declared;
    }

    // ---- readiness ----

    /**
     * Tells the scheduler whether this replica takes batches. Read when the scheduler takes the
     * event, so that reports from several threads cannot arrive out of order.
     */
    private void report() {
        driver.availability(id, this::available);
    }

    /**
     * Polls OIP ServerReady until it says yes, reads which models the container holds already
     * (when it loads models), warms it up the first time; only then does the scheduler send it
     * anything.
     */
    void awaitReadiness() {
        if (probing.compareAndSet(false, true)) {
            poll();
        }
    }

    /** After a transport failure: ServerReady again before more calls, one poll loop at a time. */
    private void awaitRecovery() {
        if (probing.compareAndSet(false, true)) {
            timers.schedule(this::poll, 100, TimeUnit.MILLISECONDS);
        }
    }

    private void poll() {
        if (closed) {
            probing.set(false);
            return;
        }
        client.serverReady(Duration.ofSeconds(1)).whenComplete((isReady, error) -> {
            if (error != null || !Boolean.TRUE.equals(isReady)) {
                timers.schedule(this::poll, 500, TimeUnit.MILLISECONDS);
                return;
            }
            held().thenAccept(held -> {
                if (warmedUp) {
                    markReady(held);
                } else {
                    warmedUp = true;
                    warmUp.run(this, held).whenComplete((ignored, e) -> {
                        warm = true;
                        markReady(held);
                    });
                }
            });
        });
    }

    /** The model versions the container holds ({@code name:version}); none asked of a single-model replica. */
    private CompletableFuture<List<String>> held() {
        if (!loadsModels) {
            return CompletableFuture.completedFuture(List.of());
        }
        return client.repositoryIndex(true, Duration.ofSeconds(1)).handle((index, error) -> {
            List<String> loaded = new ArrayList<>();
            if (error == null) {
                index.getModelsList().forEach(m -> loaded.add(PlacedModel.key(m.getName(), m.getVersion())));
            }
            return loaded;
        });
    }

    /** Ready: set as the scheduler takes the event, so that no one sees the replica available before it does. */
    private void markReady(List<String> held) {
        probing.set(false);
        driver.ready(id, held, () -> {
            ready = true;
            return available();
        });
    }

    /** An unreachable container takes nothing more until ServerReady answers again. */
    private void transportFailure() {
        ready = false;
        report();
        awaitRecovery();
    }

    // ---- calls ----

    /** Sends a batch its scheduler bound to this replica, as one ModelInfer call per input length. */
    void send(Batch<PendingPrediction> batch, PlacedModel model, CompletableFuture<Void> gate) {
        enqueue(false, gate, () -> infer(batch, model));
    }

    /** Loads a model the scheduler placed here; reports how long the container took. */
    void load(Load load, PlacedModel model, CompletableFuture<Void> gate) {
        enqueue(true, gate, () -> {
            if (!loadsModels) {
                driver.loadFailed(load); // serves one model: nothing to load
                return DONE;
            }
            long start = clock.getAsLong();
            return client.loadModel(model.name(), model.version(), repositoryTimeout(model))
                    .whenComplete((ignored, error) -> {
                        if (error == null) {
                            driver.loadCompleted(load, clock.getAsLong() - start);
                        } else {
                            driver.loadFailed(load);
                            if (unavailable(error) && ready) {
                                transportFailure();
                            }
                        }
                    });
        });
    }

    /** Unloads a model the scheduler evicted; a failure leaves the container's own LRU to make room. */
    void unload(PlacedModel model, CompletableFuture<Void> gate) {
        if (loadsModels) {
            enqueue(true, gate, () -> client.unloadModel(model.name(), model.version(), repositoryTimeout(model)));
        }
    }

    /** How long a load or unload of {@code model} may take. */
    static Duration repositoryTimeout(PlacedModel model) {
        return Duration.ofNanos(Math.max(MIN_REPOSITORY_TIMEOUT.toNanos(),
                model.loadNanos() * REPOSITORY_TIMEOUT_FACTOR)); // at most 10 h: the admin API caps load times at 1 h
    }

    private CompletableFuture<Void> infer(Batch<PendingPrediction> batch, PlacedModel model) {
        if (closed || !breaker.tryAcquirePermission()) {
            report();
            driver.failed(batch, batch.queries(), closed
                    ? new DispatchException(DispatchFailure.NO_REPLICA, "replica " + id + " was removed")
                    : new DispatchException(DispatchFailure.CIRCUIT_OPEN, "replica " + id));
            return DONE;
        }
        if (meters != null) {
            meters.sent(batch.size());
        }
        inFlight.addAndGet(batch.size());
        BatchTrace trace = trace(batch, model);
        // One OIP tensor holds vectors of one length: a container that declares no fixed length
        // gets one call per length, so one odd query cannot fail the batch of everyone else.
        IsolatingCall call = new IsolatingCall(id, client, model, minBatchTimeout, clock, meters, trace);
        CompletableFuture<IsolatingCall.Outcome> outcome = CompletableFuture.completedFuture(null);
        for (List<Query<PendingPrediction>> group : byLength(batch.queries())) {
            outcome = outcome.thenCombine(call.send(group), (a, b) -> a == null ? b : a.merge(b));
        }
        return outcome.handle((o, error) -> {
            IsolatingCall.Outcome done = error == null ? o : new IsolatingCall.Outcome(error, false, List.of(), 0, false);
            if (trace != null) {
                trace.end(done.failure() == null ? null : describe(Status.fromThrowable(DispatchException.unwrap(done.failure()))));
            }
            finish(batch, done);
            return null; // what follows on this replica must not wait on a failed report
        });
    }

    /** The batch's trace, linked to its traced queries; null when none is traced (no allocation then). */
    private BatchTrace trace(Batch<PendingPrediction> batch, PlacedModel model) {
        List<QueryTrace> traced = null;
        for (Query<PendingPrediction> q : batch.queries()) {
            if (q.payload().trace != null) {
                if (traced == null) {
                    traced = new ArrayList<>();
                }
                traced.add(q.payload().trace);
            }
        }
        return traced == null ? null
                : BatchTrace.start(traced, model.key(), batch.size(), id, driver.policy().id());
    }

    /** Every call of a batch has returned: feed the breaker, then tell the scheduler. */
    private void finish(Batch<PendingPrediction> batch, IsolatingCall.Outcome outcome) {
        inFlight.addAndGet(-batch.size());
        long took = clock.getAsLong() - batch.sentAt();
        if (!outcome.replicaFailed()) {
            breaker.onSuccess(took, TimeUnit.NANOSECONDS);
            if (breaker.getState() == CircuitBreaker.State.OPEN) {
                breaker.transitionToClosedState(); // it answers: slow is for the scheduler to judge
            }
            if (outcome.isolated()) {
                // its time includes the isolation's calls: no latency sample, but the replica is free
                driver.returnedUnmeasured(batch);
            } else {
                driver.completed(batch, outcome.serviceNanos());
            }
            return;
        }
        Status status = Status.fromThrowable(DispatchException.unwrap(outcome.failure()));
        lastFailure = describe(status);
        if (meters != null) {
            meters.failed(status.getCode());
        }
        breaker.onError(took, TimeUnit.NANOSECONDS, outcome.failure());
        if (!outcome.retry().isEmpty()) {
            transportFailure(); // unreachable: take no more batches until ServerReady answers again
        } else {
            report();
        }
        driver.failed(batch, List.copyOf(outcome.retry()), containerError(status));
    }

    private DispatchException containerError(Status status) {
        return new DispatchException(DispatchFailure.CONTAINER_ERROR, "replica " + id + ": " + describe(status));
    }

    /**
     * Chains {@code op} after what it must follow and its gate: a load or unload ({@code exclusive})
     * after everything sent before, a batch after the loads and unloads sent before.
     */
    private synchronized void enqueue(boolean exclusive, CompletableFuture<Void> gate,
            Supplier<CompletableFuture<Void>> op) {
        CompletableFuture<Void> after = exclusive ? tail : barrier;
        CompletableFuture<Void> finished = CompletableFuture.allOf(after, gate)
                .thenCompose(ignored -> op.get())
                .handle((ignored, error) -> null);
        if (exclusive) {
            barrier = finished;
            tail = finished;
        } else if (loadsModels) {
            tail = CompletableFuture.allOf(tail, finished);
        }
    }

    static Collection<List<Query<PendingPrediction>>> byLength(List<Query<PendingPrediction>> items) {
        Map<Integer, List<Query<PendingPrediction>>> groups = new LinkedHashMap<>();
        for (Query<PendingPrediction> q : items) {
            Object input = q.payload().input;
            int length = input instanceof float[] f ? f.length
                    : input instanceof int[] i ? i.length
                    : input instanceof double[] d ? d.length
                    : -1; // bytes and strings: one tensor takes any lengths
            groups.computeIfAbsent(length, k -> new ArrayList<>()).add(q);
        }
        return groups.values();
    }

    private static boolean unavailable(Throwable error) {
        return Status.fromThrowable(DispatchException.unwrap(error)).getCode() == Status.Code.UNAVAILABLE;
    }

    /** Code, description and the cause's message: Status.toString() would print the cause's stack trace. */
    static String describe(Status status) {
        StringBuilder sb = new StringBuilder(status.getCode().name());
        if (status.getDescription() != null) {
            sb.append(": ").append(status.getDescription());
        }
        if (status.getCause() != null && status.getCause().getMessage() != null) {
            sb.append(" (").append(status.getCause().getMessage()).append(')');
        }
        return sb.toString();
    }

    /** Takes nothing more; calls in flight fail as its channel closes, and their queries may go elsewhere. */
    @Override
    public void close() {
        closed = true;
        if (meters != null) {
            meters.close();
        }
        client.close();
    }
}

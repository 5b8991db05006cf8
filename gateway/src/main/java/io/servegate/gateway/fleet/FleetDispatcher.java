package io.servegate.gateway.fleet;

import io.grpc.Status;
import io.servegate.core.scheduling.Tenant;
import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.servegate.gateway.dispatch.DeclaredInput;
import io.servegate.gateway.dispatch.DispatchException;
import io.servegate.gateway.dispatch.DispatchFailure;
import io.servegate.gateway.dispatch.Dispatcher;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.tracing.CallTrace;
import io.servegate.gateway.tracing.QueryTrace;
import io.servegate.oip.client.TensorType;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The dispatcher of a gateway in a fleet: a query for a version this gateway owns goes to its own
 * replica pool; one for a version another gateway owns is forwarded to that gateway with the time
 * its deadline leaves and the app it is for (its tier and weight), and its owner's scheduler decides. Either way the cache, the deadline and
 * the default stay with the gateway the query arrived at. A query for a version no live gateway
 * owns waits a few heartbeats for an owner within its deadline; one that still has none, or whose
 * forward fails, fails with {@link DispatchFailure#FORWARD_FAILED} and the reason; one whose owner
 * does not answer in time fails with {@link DispatchFailure#DEADLINE}. A receiver that does not own
 * the version by its own view (this gateway's view was stale) makes this one read the fleet again
 * and route the query once more.
 */
public final class FleetDispatcher implements Dispatcher, AutoCloseable {

    /**
     * Heartbeats a query for a version no member owns waits for one to (a version just added is
     * granted by the first member's next heartbeat and seen by the others at theirs).
     */
    private static final int UNOWNED_BEATS = 3;

    private final Dispatcher local;
    private final Ownership ownership;
    private final ForwardBatcher forwards;
    private final Registry registry;
    private final ArrivalRates arrivals;
    private final LongSupplier clock;
    private final Timer forwardLatency;
    private final Counter forwardedAnswered;
    private final Counter forwardedFailed;
    private final Counter forwardedRerouted;
    private final Counter unowned;
    private final Counter moved;

    /** @param maxMessageBytes the largest message a gateway accepts ({@code servegate.limits.max-body-size}) */
    public FleetDispatcher(Dispatcher local, Ownership ownership, ForwardClient client, int maxMessageBytes,
            Registry registry, ArrivalRates arrivals, LongSupplier clock, MeterRegistry meters) {
        this.local = local;
        this.ownership = ownership;
        this.forwards = new ForwardBatcher(client, ownership, clock, maxMessageBytes, meters);
        this.registry = registry;
        this.arrivals = arrivals;
        this.clock = clock;
        this.forwardLatency = Timer.builder("servegate.fleet.forward.latency")
                .description("From forwarding a query to its owning gateway to that gateway's answer")
                .publishPercentileHistogram().register(meters);
        this.forwardedAnswered = forwarded(meters, "answered");
        this.forwardedFailed = forwarded(meters, "failed");
        this.forwardedRerouted = forwarded(meters, "rerouted");
        this.moved = Counter.builder("servegate.fleet.moved")
                .description("Queries queued for a version this gateway handed to another, sent after it").register(meters);
        this.unowned = Counter.builder("servegate.fleet.unowned")
                .description("Queries for a version no live gateway owned, answered with the default").register(meters);
    }

    private static Counter forwarded(MeterRegistry meters, String outcome) {
        return Counter.builder("servegate.fleet.forwarded").tag("outcome", outcome)
                .description("Queries forwarded to the gateway that owns their model version").register(meters);
    }

    @Override
    public CompletableFuture<String> submit(String model, String version, Object input, long deadlineNanos) {
        return submit(model, version, input, deadlineNanos, Tenant.DEFAULT);
    }

    /** The tenant reaches the version's scheduler, here or, with a forwarded query, at its owner. */
    @Override
    public CompletableFuture<String> submit(String model, String version, Object input, long deadlineNanos,
            Tenant tenant) {
        arrivals.arrived(model, version);
        return route(model, version, input, deadlineNanos, tenant, 0, false);
    }

    private CompletableFuture<String> route(String model, String version, Object input, long deadlineNanos,
            Tenant tenant, int beatsWaited, boolean rerouted) {
        Route route = ownership.route(model, version);
        if (route instanceof Route.Remote r) {
            return forward(r, model, version, input, deadlineNanos, tenant, rerouted);
        }
        if (route instanceof Route.Unowned u) {
            if (beatsWaited < UNOWNED_BEATS && clock.getAsLong() - deadlineNanos < 0) {
                return ownership.nextBeat().thenCompose(x -> route(model, version, input, deadlineNanos, tenant,
                        beatsWaited + 1, rerouted));
            }
            unowned.increment();
            return CompletableFuture.failedFuture(new DispatchException(DispatchFailure.FORWARD_FAILED, u.reason()));
        }
        CompletableFuture<String> here = local.submit(model, version, input, deadlineNanos, tenant);
        if (rerouted) {
            return here;
        }
        // queued here when this gateway handed the version on: routed again once the heartbeat that
        // releases it is through, so that its new owner's view already says so
        return here.exceptionallyCompose(error -> wasMoved(error)
                ? ownership.nextBeat().thenCompose(x -> {
                    moved.increment();
                    return route(model, version, input, deadlineNanos, tenant, 0, true);
                })
                : CompletableFuture.failedFuture(error));
    }

    private static boolean wasMoved(Throwable error) {
        return DispatchException.unwrap(error) instanceof DispatchException e && e.failure() == DispatchFailure.MOVED;
    }

    private CompletableFuture<String> forward(Route.Remote to, String model, String version, Object input,
            long deadlineNanos, Tenant tenant, boolean rerouted) {
        long start = clock.getAsLong();
        long left = deadlineNanos - start;
        if (left <= 0) {
            return CompletableFuture.failedFuture(new DispatchException(DispatchFailure.DEADLINE,
                    "no time left to forward to gateway " + to.member()));
        }
        ModelVersion m = registry.snapshot().model(model, version).orElse(null);
        if (m == null) {
            return CompletableFuture.failedFuture(new DispatchException(DispatchFailure.NO_REPLICA,
                    "model " + Ownership.key(model, version) + " left the registry"));
        }
        QueryTrace trace = QueryTrace.current();
        CallTrace hop = trace == null ? null
                : trace.startForward(to.member(), ForwardProtocol.SERVICE, ForwardProtocol.PREDICT.getBareMethodName());
        return forwards.forward(to, model, version, TensorType.forName(m.inputType()), input, tenant, deadlineNanos,
                        hop == null ? null : hop.headers())
                .handle((response, error) -> {
                    forwardLatency.record(clock.getAsLong() - start, TimeUnit.NANOSECONDS);
                    if (error != null) {
                        forwardedFailed.increment();
                        DispatchException failure = failure(to, error);
                        if (hop != null) {
                            hop.failed(Status.fromThrowable(error), failure.getMessage());
                        }
                        throw new CompletionException(failure);
                    }
                    if (hop != null) {
                        hop.answered(0);
                    }
                    return response;
                })
                .thenCompose(response -> {
                    if (ForwardProtocol.staleRoute(response) && !rerouted) {
                        forwardedRerouted.increment();
                        return ownership.refresh().thenCompose(x -> route(model, version, input, deadlineNanos, tenant,
                                0, true));
                    }
                    forwardedAnswered.increment();
                    return CompletableFuture.completedFuture(ForwardProtocol.output(response));
                });
    }

    private static DispatchException failure(Route.Remote to, Throwable error) {
        Status status = error instanceof StatusRuntimeException e ? e.getStatus() : Status.fromThrowable(error);
        if (status.getCode() == Status.Code.DEADLINE_EXCEEDED) {
            return new DispatchException(DispatchFailure.DEADLINE, "gateway " + to.member()
                    + ", which schedules the model, did not answer in time");
        }
        return new DispatchException(DispatchFailure.FORWARD_FAILED, "forwarding to gateway " + to.member() + " at "
                + to.address() + " failed: " + status.getCode()
                + (status.getDescription() == null ? "" : " " + status.getDescription()));
    }

    /** Stops the thread that sends forwards. */
    @Override
    public void close() {
        forwards.close();
    }

    @Override
    public boolean ready(String model, String version) {
        return local.ready(model, version);
    }

    @Override
    public DeclaredInput declaredInput(String model, String version) {
        return local.declaredInput(model, version);
    }
}

package io.servegate.gateway.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.gateway.dispatch.DispatchException;
import io.servegate.gateway.dispatch.DispatchFailure;
import io.servegate.gateway.dispatch.Dispatcher;
import io.servegate.gateway.registry.InMemoryRegistry;
import io.servegate.gateway.registry.ModelVersion;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The forwarding hop over real loopback gRPC: a query for a version another member owns reaches
 * that member's dispatcher with the same deadline, its answer or dispatch failure comes back, and
 * a forward that cannot be delivered fails with a reason the default's explanation can show.
 * Ownership is fixed here (the Redis-backed one is {@link FleetMemberRedisTest}'s subject).
 */
class FleetDispatcherTest {

    private final InMemoryRegistry registry = new InMemoryRegistry();
    private final ForwardClient client = new ForwardClient(1 << 20, FleetSecret.of(""));
    private final AtomicLong ownerDeadline = new AtomicLong();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private volatile CompletableFuture<String> ownerAnswer = new CompletableFuture<>();
    private Server owner;

    /** Every version is owned by the member at {@code address}. */
    private static Ownership ownedBy(String address) {
        return new Ownership() {
            @Override
            public String self() {
                return "forwarder";
            }

            @Override
            public Route route(String model, String version) {
                return new Route.Remote("owner", address, 7);
            }

            @Override
            public CompletableFuture<Boolean> accepts(String model, String version, Claim claim) {
                return CompletableFuture.completedFuture(false);
            }
        };
    }

    @BeforeEach
    void start() throws Exception {
        registry.addModel(new ModelVersion("m", "1", List.of(), "floats", "c", "/m", 1)).block();
        Dispatcher ownerPool = (model, version, input, deadlineNanos) -> {
            ownerDeadline.set(deadlineNanos);
            return ownerAnswer.thenApply(x -> x + ((float[]) input)[0]);
        };
        owner = NettyServerBuilder.forAddress(new java.net.InetSocketAddress("127.0.0.1", 0)).directExecutor()
                .addService(new ForwardService(registry, ownerPool, Ownership.SOLO, client, System::nanoTime, 1 << 20))
                .build()
                .start();
    }

    @AfterEach
    void stop() {
        owner.shutdownNow();
        client.close();
        registry.close();
    }

    private FleetDispatcher forwarder(String address) {
        return forwarder(address, System::nanoTime);
    }

    private FleetDispatcher forwarder(String address, java.util.function.LongSupplier clock) {
        return new FleetDispatcher((m, v, i, d) -> CompletableFuture.failedFuture(new AssertionError("not local")),
                ownedBy(address), client, 1 << 20, registry, new ArrivalRates(System::nanoTime), clock, meters);
    }

    @Test
    void theOwnerAnswersWithinTheDeadlineTheQueryCarried() throws Exception {
        ownerAnswer.complete("out-");
        FleetDispatcher forwarder = forwarder("127.0.0.1:" + owner.getPort());
        // gRPC fixes a call's timeout when the call starts: the first call, which waits for the connection
        // and loads classes, reaches the owner with that wait added. Members connect ahead (FleetNode).
        forwarder.submit("m", "1", new float[] {0f}, System.nanoTime() + TimeUnit.SECONDS.toNanos(5))
                .get(10, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        String out = forwarder.submit("m", "1", new float[] {42f, 1f}, deadline).get(5, TimeUnit.SECONDS);
        assertThat(out).isEqualTo("out-42.0");
        // the same clock on both ends here: the owner's deadline is the query's, give or take the hop's
        // one-way time (the timeout travels as time left when the call started, counted from its arrival)
        assertThat(ownerDeadline.get()).isBetween(deadline - TimeUnit.MILLISECONDS.toNanos(50),
                deadline + TimeUnit.MILLISECONDS.toNanos(50));
    }

    @Test
    void anOwnersDispatchFailureComesBackAsItself() {
        ownerAnswer.completeExceptionally(new DispatchException(DispatchFailure.OVERLOADED, "queue of m:1 full"));
        CompletableFuture<String> out = forwarder("127.0.0.1:" + owner.getPort()).submit("m", "1",
                new float[] {1f}, System.nanoTime() + TimeUnit.SECONDS.toNanos(2));
        assertThatThrownBy(() -> out.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(DispatchException.class)
                .satisfies(e -> assertThat(((DispatchException) e).failure()).isEqualTo(DispatchFailure.OVERLOADED))
                .hasMessageContaining("queue of m:1 full").hasMessageContaining("at gateway solo");
    }

    @Test
    void anOwnerThatDoesNotAnswerInTimeIsADeadlineMiss() {
        // ownerAnswer never completes
        CompletableFuture<String> out = forwarder("127.0.0.1:" + owner.getPort()).submit("m", "1",
                new float[] {1f}, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100));
        assertThatThrownBy(() -> out.get(5, TimeUnit.SECONDS)).cause().isInstanceOf(DispatchException.class)
                .satisfies(e -> assertThat(((DispatchException) e).failure()).isEqualTo(DispatchFailure.DEADLINE))
                .hasMessageContaining("did not answer in time");
    }

    @Test
    void anUnreachableOwnerIsAForwardFailureThatSaysWhere() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort();
        }
        CompletableFuture<String> out = forwarder("127.0.0.1:" + closed).submit("m", "1", new float[] {1f},
                System.nanoTime() + Duration.ofSeconds(2).toNanos());
        assertThatThrownBy(() -> out.get(5, TimeUnit.SECONDS)).cause().isInstanceOf(DispatchException.class)
                .satisfies(e -> assertThat(((DispatchException) e).failure()).isEqualTo(DispatchFailure.FORWARD_FAILED))
                .hasMessageContaining("127.0.0.1:" + closed).hasMessageContaining("UNAVAILABLE");
    }

    @Test
    void aQueryNoMemberOwnsFailsAtOnceWithTheReason() {
        FleetDispatcher d = new FleetDispatcher((m, v, i, x) -> CompletableFuture.completedFuture("local"),
                new Ownership() {
                    @Override
                    public String self() {
                        return "me";
                    }

                    @Override
                    public Route route(String model, String version) {
                        return new Route.Unowned("no gateway owns m:1 yet");
                    }

                    @Override
                    public CompletableFuture<Boolean> accepts(String model, String version, Claim claim) {
                        return CompletableFuture.completedFuture(false);
                    }
                }, client, 1 << 20, registry, new ArrivalRates(System::nanoTime), System::nanoTime,
                new SimpleMeterRegistry());
        CompletableFuture<String> out = d.submit("m", "1", new float[] {1f}, System.nanoTime() + 1_000_000_000L);
        assertThat(out).isCompletedExceptionally();
        assertThatThrownBy(out::join).cause().hasMessageContaining("no gateway owns m:1 yet");
    }

    /** A member that owns nothing and sends what it gets to {@code address}. */
    private Server notOwner(String address) throws java.io.IOException {
        return NettyServerBuilder.forAddress(new java.net.InetSocketAddress("127.0.0.1", 0)).directExecutor()
                .addService(new ForwardService(registry, (m, v, i, d) -> {
                    throw new AssertionError("scheduled a version it does not own");
                }, ownedBy(address), client, System::nanoTime, 1 << 20)).build().start();
    }

    @Test
    void aMemberThatNoLongerOwnsTheVersionRelaysOnceToTheOwnerItKnows() throws Exception {
        ownerAnswer.complete("relayed-");
        Server stale = notOwner("127.0.0.1:" + owner.getPort());
        try {
            String out = forwarder("127.0.0.1:" + stale.getPort()).submit("m", "1", new float[] {3f},
                    System.nanoTime() + Duration.ofSeconds(2).toNanos()).get(5, TimeUnit.SECONDS);
            assertThat(out).isEqualTo("relayed-3.0");
        } finally {
            stale.shutdownNow();
        }
    }

    @Test
    void aQueryIsNotForwardedMoreThanTwice() throws Exception {
        Server second = notOwner("127.0.0.1:" + owner.getPort());
        Server first = notOwner("127.0.0.1:" + second.getPort());
        try {
            CompletableFuture<String> out = forwarder("127.0.0.1:" + first.getPort()).submit("m", "1",
                    new float[] {1f}, System.nanoTime() + Duration.ofSeconds(2).toNanos());
            assertThatThrownBy(() -> out.get(5, TimeUnit.SECONDS)).cause().isInstanceOf(DispatchException.class)
                    .satisfies(e -> assertThat(((DispatchException) e).failure())
                            .isEqualTo(DispatchFailure.FORWARD_FAILED))
                    .hasMessageContaining("does not schedule m:1").hasMessageContaining("its owner is owner");
        } finally {
            first.shutdownNow();
            second.shutdownNow();
        }
    }

    /**
     * A member that does not own the version and knows no other owner refuses it as a stale route:
     * the sender reads the fleet again and routes the query once more, here to the real owner.
     */
    @Test
    void aStaleRouteMakesTheSenderReadTheFleetAgainAndRouteOnceMore() throws Exception {
        ownerAnswer.complete("rerouted-");
        Server stale = NettyServerBuilder.forAddress(new java.net.InetSocketAddress("127.0.0.1", 0)).directExecutor()
                .addService(new ForwardService(registry, (m, v, i, d) -> {
                    throw new AssertionError("scheduled a version it does not own");
                }, new Ownership() {
                    @Override
                    public String self() {
                        return "stale";
                    }

                    @Override
                    public Route route(String model, String version) {
                        return new Route.Unowned("no gateway owns m:1 as far as this one knows");
                    }

                    @Override
                    public CompletableFuture<Boolean> accepts(String model, String version, Claim claim) {
                        return CompletableFuture.completedFuture(false);
                    }
                }, client, System::nanoTime, 1 << 20)).build().start();
        AtomicLong refreshes = new AtomicLong();
        Ownership sender = new Ownership() {
            @Override
            public String self() {
                return "sender";
            }

            @Override
            public Route route(String model, String version) {
                int port = refreshes.get() == 0 ? stale.getPort() : owner.getPort();
                return new Route.Remote("owner", "127.0.0.1:" + port, 7);
            }

            @Override
            public CompletableFuture<Boolean> accepts(String model, String version, Claim claim) {
                return CompletableFuture.completedFuture(false);
            }

            @Override
            public CompletableFuture<Void> refresh() {
                refreshes.incrementAndGet();
                return CompletableFuture.completedFuture(null);
            }
        };
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try {
            String out = new FleetDispatcher((m, v, i, d) -> CompletableFuture.failedFuture(new AssertionError()),
                    sender, client, 1 << 20, registry, new ArrivalRates(System::nanoTime), System::nanoTime, meters)
                    .submit("m", "1", new float[] {5f}, System.nanoTime() + Duration.ofSeconds(2).toNanos())
                    .get(5, TimeUnit.SECONDS);
            assertThat(out).isEqualTo("rerouted-5.0");
            assertThat(refreshes.get()).isEqualTo(1);
            assertThat(meters.get("servegate.fleet.forwarded").tag("outcome", "rerouted").counter().count())
                    .isEqualTo(1);
        } finally {
            stale.shutdownNow();
        }
    }

    /** An owner whose dispatcher answers input {@code [k, ...]} with {@code "out-k"}, except k = 0, never answered. */
    private Server owner(boolean predictMany) throws java.io.IOException {
        Dispatcher pool = (m, v, input, d) -> ((float[]) input)[0] == 0 ? new CompletableFuture<>()
                : CompletableFuture.completedFuture("out-" + (int) ((float[]) input)[0]);
        io.grpc.ServerServiceDefinition all = new ForwardService(registry, pool, Ownership.SOLO, client,
                System::nanoTime, 1 << 20).bindService();
        io.grpc.ServerServiceDefinition.Builder service = io.grpc.ServerServiceDefinition.builder(ForwardProtocol.SERVICE)
                .addMethod(all.getMethod(ForwardProtocol.PREDICT.getFullMethodName()));
        if (predictMany) {
            service.addMethod(all.getMethod(ForwardProtocol.PREDICT_MANY.getFullMethodName()));
        }
        return NettyServerBuilder.forAddress(new java.net.InetSocketAddress("127.0.0.1", 0)).directExecutor()
                .addService(service.build()).build().start();
    }

    /** {@code n} queries submitted at once, input {@code [i + 1]}, one of them NaN and one [0] when asked. */
    private static List<CompletableFuture<String>> burst(FleetDispatcher forwarder, int n, boolean nan, boolean never) {
        long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        List<CompletableFuture<String>> out = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            float v = nan && i == 3 ? Float.NaN : never && i == 5 ? 0 : i + 1;
            out.add(forwarder.submit("m", "1", new float[] {v}, deadline));
        }
        return out;
    }

    @Test
    void aBurstToOneOwnerGoesInFewCallsAndEachQueryGetsItsOwnAnswerAsSoonAsItIsReady() throws Exception {
        Server many = owner(true);
        // the burst arrives while the forwarding thread is busy (held here on its clock reading): how many
        // queries a call takes then depends on what waited, not on how fast this machine runs that thread
        java.util.concurrent.atomic.AtomicReference<java.util.concurrent.CountDownLatch> busy =
                new java.util.concurrent.atomic.AtomicReference<>(new java.util.concurrent.CountDownLatch(0));
        java.util.function.LongSupplier clock = () -> {
            if (Thread.currentThread().getName().equals("servegate-fleet-forward")) {
                try {
                    busy.get().await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return System.nanoTime();
        };
        try {
            FleetDispatcher forwarder = forwarder("127.0.0.1:" + many.getPort(), clock);
            forwarder.submit("m", "1", new float[] {1f}, System.nanoTime() + Duration.ofSeconds(5).toNanos())
                    .get(10, TimeUnit.SECONDS);
            busy.set(new java.util.concurrent.CountDownLatch(1));
            List<CompletableFuture<String>> out = burst(forwarder, 250, true, true);
            busy.get().countDown();
            for (int i = 0; i < out.size(); i++) {
                if (i == 3) {
                    // a row outside the public limits fails alone, as the client's error
                    int row = i;
                    assertThatThrownBy(() -> out.get(row).get(5, TimeUnit.SECONDS)).cause()
                            .isInstanceOf(DispatchException.class)
                            .satisfies(e -> assertThat(((DispatchException) e).failure())
                                    .isEqualTo(DispatchFailure.INPUT_REJECTED));
                } else if (i != 5) {
                    // answered although row 5 of the same call never is
                    assertThat(out.get(i).get(5, TimeUnit.SECONDS)).isEqualTo("out-" + (i + 1));
                }
            }
            assertThat(out.get(5)).isNotDone();
            io.micrometer.core.instrument.DistributionSummary perCall =
                    meters.get("servegate.fleet.forward.queries").summary();
            assertThat(perCall.totalAmount()).isEqualTo(251);
            // the warm-up query, then the burst in at most two calls: what the forwarding thread took before
            // it was held (the first query, or more when it ran late), and all that arrived meanwhile
            assertThat(perCall.count()).as("calls for 251 queries").isBetween(2L, 3L);
            forwarder.close();
        } finally {
            many.shutdownNow();
        }
    }

    @Test
    void anOwnerWithoutPredictManyIsSentEachQueryAlone() throws Exception {
        Server old = owner(false);
        try {
            FleetDispatcher forwarder = forwarder("127.0.0.1:" + old.getPort());
            List<CompletableFuture<String>> out = burst(forwarder, 40, false, false);
            for (int i = 0; i < out.size(); i++) {
                assertThat(out.get(i).get(5, TimeUnit.SECONDS)).isEqualTo("out-" + (i + 1));
            }
            forwarder.close();
        } finally {
            old.shutdownNow();
        }
    }

    /**
     * The view of a member handing its versions on: it schedules them here ({@link Route.Local})
     * until the test moves {@link #route} on; the heartbeat that releases them is through once the
     * test completes {@link #releasingBeat}.
     */
    private static final class HandingOn implements Ownership {
        final AtomicReference<Route> route = new AtomicReference<>(new Route.Local(7));
        final CompletableFuture<Void> releasingBeat = new CompletableFuture<>();

        @Override
        public String self() {
            return "old-owner";
        }

        @Override
        public Route route(String model, String version) {
            return route.get();
        }

        @Override
        public CompletableFuture<Boolean> accepts(String model, String version, Claim claim) {
            return CompletableFuture.completedFuture(route.get() instanceof Route.Local);
        }

        @Override
        public CompletableFuture<Void> nextBeat() {
            return releasingBeat;
        }
    }

    /**
     * A query queued here when this gateway hands its version on fails locally as moved; it goes
     * to the new owner once the heartbeat that releases the version is through, not before (the
     * new owner's view would not show the version yet), and only once.
     */
    @Test
    void aQueryMovedByAHandOffGoesToTheNewOwnerAfterTheReleasingHeartbeat() throws Exception {
        ownerAnswer.complete("out-");
        String address = "127.0.0.1:" + owner.getPort();
        HandingOn handingOn = new HandingOn();
        CompletableFuture<Void> releasingBeat = handingOn.releasingBeat;
        AtomicReference<Route> route = handingOn.route;
        AtomicInteger local = new AtomicInteger();
        Dispatcher movesEverything = (m, v, i, d) -> {
            local.incrementAndGet();
            return CompletableFuture.failedFuture(new DispatchException(DispatchFailure.MOVED, "handed on"));
        };
        FleetDispatcher forwarder = new FleetDispatcher(movesEverything, handingOn, client, 1 << 20, registry,
                new ArrivalRates(System::nanoTime), System::nanoTime, meters);
        try {
            CompletableFuture<String> out = forwarder.submit("m", "1", new float[] {5f},
                    System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
            route.set(new Route.Remote("new-owner", address, 8)); // the view as the release is sent
            Thread.sleep(50);
            assertThat(out).as("before the releasing heartbeat is through").isNotDone();

            releasingBeat.complete(null);

            assertThat(out.get(5, TimeUnit.SECONDS)).isEqualTo("out-5.0");
            assertThat(local).as("scheduled here once, then forwarded").hasValue(1);
            assertThat(meters.get("servegate.fleet.moved").counter().count()).isEqualTo(1);

            // moved again after its move (the release did not happen): the default, not a loop
            route.set(new Route.Local(9));
            CompletableFuture<String> again = forwarder.submit("m", "1", new float[] {6f},
                    System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
            assertThatThrownBy(() -> again.get(5, TimeUnit.SECONDS)).cause().isInstanceOf(DispatchException.class)
                    .satisfies(e -> assertThat(((DispatchException) e).failure()).isEqualTo(DispatchFailure.MOVED));
            assertThat(local).hasValue(3);
        } finally {
            forwarder.close();
        }
    }

    /**
     * A forwarded query queued at a gateway when it hands the version on is relayed to the new
     * owner once the releasing heartbeat is through; the gateway that forwarded it gets the answer.
     */
    @Test
    void aForwardedQueryMovedByAHandOffIsRelayedToTheNewOwner() throws Exception {
        ownerAnswer.complete("out-");
        String newOwner = "127.0.0.1:" + owner.getPort();
        HandingOn handingOn = new HandingOn();
        CompletableFuture<Void> releasingBeat = handingOn.releasingBeat;
        AtomicReference<Route> route = handingOn.route;
        Dispatcher movesEverything = (m, v, i, d) -> {
            route.set(new Route.Remote("new-owner", newOwner, 8)); // handed on while it was queued
            return CompletableFuture.failedFuture(new DispatchException(DispatchFailure.MOVED, "handed on"));
        };
        Server oldOwner = NettyServerBuilder.forAddress(new java.net.InetSocketAddress("127.0.0.1", 0))
                .directExecutor()
                .addService(new ForwardService(registry, movesEverything, handingOn, client, System::nanoTime, 1 << 20))
                .build().start();
        FleetDispatcher forwarder = forwarder("127.0.0.1:" + oldOwner.getPort());
        try {
            CompletableFuture<String> out = forwarder.submit("m", "1", new float[] {3f},
                    System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
            Thread.sleep(100);
            assertThat(out).as("before the old owner's releasing heartbeat is through").isNotDone();

            releasingBeat.complete(null);

            assertThat(out.get(5, TimeUnit.SECONDS)).isEqualTo("out-3.0");
        } finally {
            forwarder.close();
            oldOwner.shutdownNow();
        }
    }
}

package io.servegate.gateway.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.core.scheduling.Priority;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.dispatch.Dispatcher;
import io.servegate.gateway.registry.InMemoryRegistry;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.oip.InferParameter;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.client.TensorType;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The app a forwarded query is for crosses the hop: over real loopback gRPC, a query forwarded by
 * {@code Predict}, coalesced with other apps' queries into {@code PredictMany}, or relayed by a
 * member that no longer owns the version reaches the owner's dispatcher with its tier and weight, one without a tenant (an older sender) as the default tenant, and a tenant
 * outside the allowed values is refused as an invalid argument, nothing scheduled.
 */
class ForwardedTenantTest {

    private static final Tenant CRITICAL = new Tenant("fraud", Priority.CRITICAL, 5);
    private static final Tenant SHEDDABLE = new Tenant("batch-scoring", Priority.SHEDDABLE, 1);

    private final InMemoryRegistry registry = new InMemoryRegistry();
    private final ForwardClient client = new ForwardClient(1 << 20, FleetSecret.of(""));
    /** Input value (its first element) to the tenant the owner's dispatcher was given. */
    private final Map<Float, Tenant> scheduled = new ConcurrentHashMap<>();
    private Server owner;
    private String address;

    @BeforeEach
    void start() throws Exception {
        registry.addModel(new ModelVersion("m", "1", List.of(), "floats", "c", "/m", 1)).block();
        Dispatcher pool = new Dispatcher() {
            @Override
            public CompletableFuture<String> submit(String model, String version, Object input, long deadlineNanos) {
                return submit(model, version, input, deadlineNanos, Tenant.DEFAULT);
            }

            @Override
            public CompletableFuture<String> submit(String model, String version, Object input, long deadlineNanos,
                    Tenant tenant) {
                scheduled.put(((float[]) input)[0], tenant);
                return CompletableFuture.completedFuture("out-" + ((float[]) input)[0]);
            }
        };
        owner = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).directExecutor()
                .addService(new ForwardService(registry, pool, Ownership.SOLO, client, System::nanoTime, 1 << 20))
                .build().start();
        address = "127.0.0.1:" + owner.getPort();
    }

    @AfterEach
    void stop() {
        owner.shutdownNow();
        client.close();
        registry.close();
    }

    private Route.Remote route() {
        return new Route.Remote("owner", address, 7);
    }

    private FleetDispatcher forwarder() {
        return forwarder(System::nanoTime, new SimpleMeterRegistry());
    }

    private FleetDispatcher forwarder(java.util.function.LongSupplier clock, SimpleMeterRegistry meters) {
        return new FleetDispatcher((m, v, i, d) -> CompletableFuture.failedFuture(new AssertionError("not local")),
                new Ownership() {
                    @Override
                    public String self() {
                        return "forwarder";
                    }

                    @Override
                    public Route route(String model, String version) {
                        return ForwardedTenantTest.this.route();
                    }

                    @Override
                    public CompletableFuture<Boolean> accepts(String model, String version, Claim claim) {
                        return CompletableFuture.completedFuture(false);
                    }
                }, client, 1 << 20, registry, new ArrivalRates(System::nanoTime), clock, meters);
    }

    private static long inTwoSeconds() {
        return System.nanoTime() + Duration.ofSeconds(2).toNanos();
    }

    @Test
    void aForwardedQueryOfACriticalAndOfASheddableAppReachesTheOwnerWithItsTenant() throws Exception {
        try (FleetDispatcher forwarder = forwarder()) {
            assertThat(forwarder.submit("m", "1", new float[] {1f}, inTwoSeconds(), CRITICAL)
                    .get(5, TimeUnit.SECONDS)).isEqualTo("out-1.0");
            forwarder.submit("m", "1", new float[] {2f}, inTwoSeconds(), SHEDDABLE).get(5, TimeUnit.SECONDS);
            forwarder.submit("m", "1", new float[] {3f}, inTwoSeconds()).get(5, TimeUnit.SECONDS);
        }
        assertThat(scheduled).containsEntry(1f, CRITICAL).containsEntry(2f, SHEDDABLE)
                .containsEntry(3f, Tenant.DEFAULT);
    }

    @Test
    void aBurstOfSeveralAppsIsCoalescedAndEachQueryKeepsItsTenant() throws Exception {
        // the burst arrives while the forwarding thread is held on its clock reading, so it goes in one call
        java.util.concurrent.CountDownLatch busy = new java.util.concurrent.CountDownLatch(1);
        java.util.function.LongSupplier clock = () -> {
            if (Thread.currentThread().getName().equals("servegate-fleet-forward")) {
                try {
                    busy.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return System.nanoTime();
        };
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        List<Tenant> tenants = List.of(CRITICAL, SHEDDABLE, Tenant.DEFAULT);
        List<CompletableFuture<String>> out = new ArrayList<>();
        try (FleetDispatcher forwarder = forwarder(clock, meters)) {
            for (int i = 0; i < 30; i++) {
                out.add(forwarder.submit("m", "1", new float[] {i + 1}, inTwoSeconds(), tenants.get(i % 3)));
            }
            busy.countDown();
            for (CompletableFuture<String> f : out) {
                f.get(5, TimeUnit.SECONDS);
            }
            assertThat(meters.get("servegate.fleet.forward.queries").summary().count()).as("calls for 30 queries")
                    .isLessThan(30);
        }
        for (int i = 0; i < 30; i++) {
            assertThat(scheduled.get(i + 1f)).as("query %d", i).isEqualTo(tenants.get(i % 3));
        }
    }

    @Test
    void aRelayedQueryKeepsItsTenant() throws Exception {
        // a member that no longer owns the version relays the query to the owner it knows
        Server stale = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).directExecutor()
                .addService(new ForwardService(registry, (m, v, i, d) -> {
                    throw new AssertionError("scheduled a version it does not own");
                }, new Ownership() {
                    @Override
                    public String self() {
                        return "stale";
                    }

                    @Override
                    public Route route(String model, String version) {
                        return ForwardedTenantTest.this.route();
                    }

                    @Override
                    public CompletableFuture<Boolean> accepts(String model, String version, Claim claim) {
                        return CompletableFuture.completedFuture(false);
                    }
                }, client, System::nanoTime, 1 << 20)).build().start();
        try {
            ModelInferRequest request = ForwardProtocol.request("m", "1", TensorType.FLOATS, new float[] {8f},
                    SHEDDABLE, "forwarder", new Route.Remote("stale", "127.0.0.1:" + stale.getPort(), 7), 1);
            client.call("127.0.0.1:" + stale.getPort(), request, Duration.ofSeconds(2).toNanos(), null)
                    .get(5, TimeUnit.SECONDS);
        } finally {
            stale.shutdownNow();
        }
        assertThat(scheduled).containsEntry(8f, SHEDDABLE);
    }

    @Test
    void eachRowOfACoalescedForwardReachesTheOwnerWithItsOwnTenant() throws Exception {
        List<Tenant> tenants = List.of(CRITICAL, SHEDDABLE, Tenant.DEFAULT, CRITICAL);
        List<Object> rows = new ArrayList<>();
        for (int i = 0; i < tenants.size(); i++) {
            rows.add(new float[] {i + 1});
        }
        ModelInferRequest request = ForwardProtocol.requestMany("m", "1", TensorType.FLOATS, rows, tenants,
                new long[] {2_000_000_000L, 2_000_000_000L, 2_000_000_000L, 2_000_000_000L}, "forwarder", route());
        assertThat(callMany(request)).hasSize(4);
        for (int i = 0; i < tenants.size(); i++) {
            assertThat(scheduled.get(i + 1f)).as("row %d", i).isEqualTo(tenants.get(i));
        }
    }

    @Test
    void aForwardWithoutATenantIsTheDefaultTenantAsFromAnOlderGateway() throws Exception {
        ModelInferRequest request = ForwardProtocol.request("m", "1", TensorType.FLOATS, new float[] {4f},
                Tenant.DEFAULT, "forwarder", route(), 1);
        assertThat(request.getParametersMap()).doesNotContainKey(ForwardProtocol.TENANT);
        client.call(address, request, Duration.ofSeconds(2).toNanos(), null).get(5, TimeUnit.SECONDS);
        assertThat(scheduled).containsEntry(4f, Tenant.DEFAULT);
    }

    @Test
    void aTenantOutsideTheAllowedValuesIsRefusedAndNothingIsScheduled() {
        for (String bad : new String[] {"urgent:1:fraud", "critical:0:fraud", "critical:1001:fraud",
                "critical:-1:fraud", "critical:x:fraud", "critical:99999999999:fraud", "critical:1:Fraud App",
                "critical:1:../etc", "critical:1", "", "critical:1:" + "a".repeat(64)}) {
            ModelInferRequest request = ForwardProtocol.request("m", "1", TensorType.FLOATS, new float[] {5f},
                    Tenant.DEFAULT, "forwarder", route(), 1).toBuilder()
                    .putParameters(ForwardProtocol.TENANT, InferParameter.newBuilder().setStringParam(bad).build())
                    .build();
            assertThatThrownBy(() -> client.call(address, request, Duration.ofSeconds(2).toNanos(), null)
                    .get(5, TimeUnit.SECONDS)).as("tenant '%s'", bad).cause()
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).startsWith("forwarded tenant: ");
                    });
        }
        assertThat(scheduled).isEmpty();
    }

    @Test
    void aCoalescedForwardWithoutOneValidTenantPerRowIsRefusedWhole() {
        List<Object> rows = List.of(new float[] {6f}, new float[] {7f});
        ModelInferRequest valid = ForwardProtocol.requestMany("m", "1", TensorType.FLOATS, rows,
                List.of(CRITICAL, SHEDDABLE), new long[] {2_000_000_000L, 2_000_000_000L}, "forwarder", route());
        for (String bad : new String[] {"critical:5:fraud", "critical:5:fraud,sheddable:1:a,standard:1:",
                "critical:5:fraud,bogus:1:a", "critical:5:fraud,,", ",".repeat(10_000)}) {
            ModelInferRequest request = valid.toBuilder()
                    .putParameters(ForwardProtocol.TENANTS, InferParameter.newBuilder().setStringParam(bad).build())
                    .build();
            assertThatThrownBy(() -> callMany(request)).as("tenants '%s'", bad)
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).startsWith("forwarded tenant: ");
                    });
        }
        assertThat(scheduled).isEmpty();
    }

    /** The answers of a {@code PredictMany} call, or its error thrown. */
    private List<ModelInferResponse> callMany(ModelInferRequest request) throws Exception {
        List<ModelInferResponse> answers = new ArrayList<>();
        CompletableFuture<List<ModelInferResponse>> done = new CompletableFuture<>();
        client.callMany(address, request, Duration.ofSeconds(2).toNanos(), new StreamObserver<>() {
            @Override
            public void onNext(ModelInferResponse value) {
                answers.add(value);
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                done.complete(answers);
            }
        });
        try {
            return done.get(5, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw (Exception) e.getCause();
        }
    }
}

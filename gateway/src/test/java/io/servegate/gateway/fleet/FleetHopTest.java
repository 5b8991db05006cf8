package io.servegate.gateway.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.GatewayApplication;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.gateway.testsupport.RedisServer;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.InferParameter;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The hop between gateways as a stranger, or a member that lies, meets it: two gateways on one
 * real {@code redis-server} with a fleet secret, one in-process container, real gRPC on loopback.
 * A call without the secret (or with another) is refused; a forwarded row outside the public
 * limits gets the error the public OIP gRPC endpoint gives the same row; a forged claim (the
 * receiver named owner at the current epoch, at 2^62, or the real owner posing as releasing it)
 * is not scheduled by the gateway that does not own the version. The port binds the advertised
 * address only, and a gateway on Redis without a secret does not start.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FleetHopTest {

    private static final String MODEL = "hm";
    private static final String SECRET = "hop-test-secret";

    private RedisServer redis;
    private ModelContainer<float[], String> container;
    private final List<ConfigurableApplicationContext> gateways = new ArrayList<>();
    private final List<Integer> publicGrpcPorts = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    /** The gateway that owns {@link #MODEL}'s version and the one that does not. */
    private int owner;
    private int other;

    @BeforeAll
    void start() throws Exception {
        redis = RedisServer.start();
        container = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                (List<float[]> batch) -> batch.stream().map(x -> "sum:" + (x[0] + x[1])).toList())
                .name(MODEL).version("1").host("127.0.0.1").port(0).inputLength(2).build().start();
        for (int g = 0; g < 2; g++) {
            int grpc = FreePort.pick();
            publicGrpcPorts.add(grpc);
            gateways.add(new SpringApplicationBuilder(GatewayApplication.class).run(gateway("gw" + g,
                    "--servegate.oip.grpc-port=" + grpc, "--servegate.fleet.secret=" + SECRET)));
        }
        WebClient admin = WebClient.create("http://127.0.0.1:" + gateways.get(0).getBean(AdminServer.class).port());
        post(admin, "/admin/add_model", "{\"model_name\":\"hm\",\"model_version\":\"1\",\"input_type\":\"floats\"}");
        post(admin, "/admin/add_container", "{\"model_name\":\"hm\",\"model_version\":\"1\",\"address\":\"127.0.0.1:"
                + container.port() + "\"}");
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!(node(0).member().owned().size() + node(1).member().owned().size() == 1
                && inputLength(0) == 2 && inputLength(1) == 2)) {
            assertThat(System.nanoTime()).as("one owner, and both gateways know the model's input length")
                    .isLessThan(until);
            Thread.sleep(50);
        }
        owner = node(0).member().owned().isEmpty() ? 1 : 0;
        other = 1 - owner;
        // both views agree on the owner before any claim is judged
        until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!(node(other).member().route(MODEL, "1") instanceof Route.Remote)) {
            assertThat(System.nanoTime()).as("the other gateway sees the owner").isLessThan(until);
            Thread.sleep(50);
        }
    }

    private String[] gateway(String name, String... more) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--servegate.admin.port=0",
                "--servegate.registry.store=redis", "--servegate.registry.redis-uri=" + redis.uri(),
                "--servegate.registry.key-prefix=sg-hop", "--servegate.fleet.port=0",
                "--servegate.fleet.advertise-host=127.0.0.1", "--servegate.fleet.name=" + name,
                "--servegate.fleet.heartbeat=100ms", "--servegate.fleet.lease=600ms",
                "--spring.main.banner-mode=off", "--logging.level.root=WARN"));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    @AfterAll
    void stop() {
        channels.forEach(ManagedChannel::shutdownNow);
        gateways.forEach(ConfigurableApplicationContext::close);
        if (container != null) {
            container.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void aCallWithoutTheSecretOrWithAnotherIsRefused() {
        double refused = refused(other);
        double arrivals = schedulerArrivals(owner);
        for (String secret : new String[] {null, "not-the-secret", ""}) {
            ModelInferRequest request = forward(new float[] {1, 2}, owner, 1);
            assertThatThrownBy(() -> call(other, secret, request)).as("secret %s", secret)
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(e.getStatus().getCode())
                            .isEqualTo(Status.Code.UNAUTHENTICATED));
        }
        assertThat(refused(other) - refused).isEqualTo(3);
        assertThat(schedulerArrivals(owner)).isEqualTo(arrivals);
        // the same call with the secret is relayed to the owner and answered
        ModelInferResponse answered = call(other, SECRET, forward(new float[] {1, 2}, owner, 1));
        assertThat(ForwardProtocol.output(answered)).isEqualTo("sum:3.0");
    }

    @Test
    void forwardedRowsOutsideThePublicLimitsGetThePublicErrors() {
        float[] tooLong = new float[2_000_000];
        for (float[] row : List.of(new float[] {Float.NaN, 1}, new float[] {1, 2, 3}, tooLong,
                new float[] {1, Float.POSITIVE_INFINITY})) {
            ModelInferRequest forwarded = forward(row, owner, 1);
            Status viaPublic = statusOf(() -> GRPCInferenceServiceGrpc.newBlockingStub(channel(publicGrpcPorts.get(owner),
                    null)).withDeadlineAfter(10, TimeUnit.SECONDS).modelInfer(forwarded.toBuilder().clearParameters()
                    .build()));
            Status viaHop = statusOf(() -> call(owner, SECRET, forwarded));
            assertThat(viaPublic.getCode()).as("public, %d elements", row.length).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(viaHop.getCode()).as("hop, %d elements", row.length).isEqualTo(viaPublic.getCode());
            assertThat(viaHop.getDescription()).isEqualTo(viaPublic.getDescription());
        }
        // refused by the declared shape before the row is looked at, as on the public endpoint
        assertThat(statusOf(() -> call(owner, SECRET, forward(tooLong, owner, 1))).getDescription())
                .contains("2000000").contains("[-1, 2]");
    }

    @Test
    void forgedClaimsAreNotScheduledByAGatewayThatDoesNotOwnTheVersion() {
        FleetMember receiver = node(other).member();
        FleetMember realOwner = node(owner).member();
        long epoch = realOwner.state().owners().get(MODEL + ":1").epoch();
        double arrivals = schedulerArrivals(other);
        List<ModelInferRequest> forged = List.of(
                claim(receiver.self(), epoch, realOwner.self(), 2),
                claim(receiver.self(), epoch + 1, "intruder", 2),
                claim(receiver.self(), 1L << 62, "intruder", 2),
                // what the owner sent while handing a version off, before claims were checked
                claim(receiver.self(), epoch, realOwner.self(), 2).toBuilder().putParameters("servegate_from_owner",
                        InferParameter.newBuilder().setBoolParam(true).build()).build());
        for (ModelInferRequest request : forged) {
            ModelInferResponse response = call(other, SECRET, request);
            assertThat(ForwardProtocol.staleRoute(response)).as("%s", request.getParametersMap()).isTrue();
            assertThat(ForwardProtocol.scheduledBy(response)).isEqualTo(receiver.self());
        }
        // one hop left: relayed to the owner, which schedules it
        ModelInferResponse relayed = call(other, SECRET, claim(receiver.self(), 1L << 62, "intruder", 1));
        assertThat(ForwardProtocol.scheduledBy(relayed)).isEqualTo(realOwner.self());
        assertThat(schedulerArrivals(other)).as("queries the non-owner scheduled").isEqualTo(arrivals);
        assertThat(realOwner.owned()).containsExactly(MODEL + ":1");
        assertThat(receiver.owned()).isEmpty();
    }

    @Test
    void theHopBindsTheAdvertisedAddressOnly() throws Exception {
        int port = node(0).port();
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
        }
        assertThatThrownBy(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.2", port), 2000);
            }
        }).isInstanceOf(ConnectException.class);
    }

    @Test
    void aGatewayOnRedisDoesNotStartWithoutAFleetSecret() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(GatewayApplication.class)
                .run(gateway("no-secret", "--servegate.oip.grpc-port=0")).close())
                .hasStackTraceContaining("servegate.fleet.secret (or secret-file) is not set")
                .hasStackTraceContaining("servegate.fleet.require-secret=false");
    }

    // ------------------------------------------------------------------------------------------

    private FleetNode node(int g) {
        return gateways.get(g).getBean(FleetNode.class);
    }

    private int inputLength(int g) {
        return gateways.get(g).getBean(io.servegate.gateway.dispatch.ReplicaPool.class).declaredInput(MODEL, "1").rowLength();
    }

    /** A forward of {@code row} as a member that routes by the owner it sees would send it to gateway {@code to}. */
    private ModelInferRequest forward(float[] row, int to, int hops) {
        FleetMember m = node(to).member();
        return ForwardProtocol.request(MODEL, "1", TensorType.FLOATS, row, Tenant.DEFAULT, "sender",
                new Route.Remote(m.self(), "127.0.0.1:" + node(to).port(), 1), hops);
    }

    /** A forward of a valid row that claims {@code owner} owns the version at {@code epoch}. */
    private ModelInferRequest claim(String owner, long epoch, String from, int hops) {
        return ForwardProtocol.request(MODEL, "1", TensorType.FLOATS, new float[] {4, 5}, Tenant.DEFAULT, from,
                new Route.Remote(owner, "ignored", epoch), hops);
    }

    private ModelInferResponse call(int g, String secret, ModelInferRequest request) {
        return ClientCalls.blockingUnaryCall(channel(node(g).port(), secret), ForwardProtocol.PREDICT,
                CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), request);
    }

    private ManagedChannel channel(int port, String secret) {
        NettyChannelBuilder builder = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()
                .maxInboundMessageSize(64 << 20);
        if (secret != null) {
            Metadata headers = new Metadata();
            headers.put(FleetSecret.AUTHORIZATION, "Bearer " + secret);
            builder.intercept(MetadataUtils.newAttachHeadersInterceptor(headers));
        }
        ManagedChannel c = builder.build();
        channels.add(c);
        return c;
    }

    private static Status statusOf(Runnable call) {
        try {
            call.run();
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
        throw new AssertionError("the call succeeded");
    }

    private double refused(int g) {
        var c = gateways.get(g).getBean(MeterRegistry.class).find("servegate.fleet.hop.refused").counter();
        return c == null ? 0 : c.count();
    }

    private double schedulerArrivals(int g) {
        FunctionCounter c = gateways.get(g).getBean(MeterRegistry.class).find("servegate.scheduler.arrivals")
                .tag("model", MODEL).functionCounter();
        return c == null ? 0 : c.count();
    }

    private static void post(WebClient admin, String uri, String body) {
        String reply = admin.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body).retrieve()
                .bodyToMono(String.class).block(Duration.ofSeconds(10));
        assertThat(reply).as(uri).isNotNull();
    }
}

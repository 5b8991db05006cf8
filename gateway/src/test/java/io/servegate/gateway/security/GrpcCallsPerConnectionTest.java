package io.servegate.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.protobuf.ByteString;
import io.grpc.Attributes;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.gateway.api.GrpcBytesInFlight;
import io.servegate.gateway.config.ServegateProperties;
import io.servegate.gateway.connections.ConnectionBudget;
import io.servegate.gateway.connections.GrpcConnectionGuard;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * One client opening many calls on one connection of a gRPC port, guarded as the gateway guards
 * its OIP and fleet ports (defaults bound from {@code servegate.connections}), against a service
 * that holds every call until released: 300 concurrent calls on one channel. Small calls: the
 * server has at most 100 in progress on the connection, the rest wait on the client's side, and all
 * are answered. 900 KB calls (each under the 1 MiB every stream may buffer): the port's bytes stay
 * under twice its budget and the calls beyond get {@code RESOURCE_EXHAUSTED}. One client's calls
 * hold at most its share, and another client's are still admitted.
 */
class GrpcCallsPerConnectionTest {

    private static final int CALLS = 300;
    private static final int CAP = 100;
    private static final long BUDGET = 16L << 20;

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final HoldingService service = new HoldingService();
    private GrpcBytesInFlight bytes;
    private GrpcConnectionGuard guard;
    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void start() throws Exception {
        ServegateProperties.Connections connections = new Binder(new MapConfigurationPropertySource(Map.of()))
                .bindOrCreate("servegate.connections", ServegateProperties.Connections.class);
        assertThat(connections.grpc().maxConcurrentCallsPerConnection()).as("the default cap").isEqualTo(CAP);
        guard = GrpcConnectionGuard.of(connections, new ConnectionBudget(1000), "test", meters);
        bytes = new GrpcBytesInFlight("test", BUDGET, BUDGET, meters);
        server = bytes.apply(guard.apply(NettyServerBuilder.forPort(0))).maxInboundMessageSize(1 << 20)
                .addService(service).build().start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        service.release();
        channel.shutdownNow();
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        guard.close();
    }

    @Test
    void aConnectionHasAtMostTheCapOfCallsInProgress() throws Exception {
        List<ListenableFuture<ModelInferResponse>> calls = send(1024);
        awaitSteady(() -> service.held());
        assertThat(service.mostHeld()).as("calls in progress on the connection").isEqualTo(CAP);
        service.release();
        for (ListenableFuture<ModelInferResponse> call : calls) {
            assertThat(code(call)).isEqualTo(Status.Code.OK);
        }
    }

    @Test
    void smallCallsMeetTheCeilingOfTwiceTheBudget() throws Exception {
        int message = 900 << 10;
        List<ListenableFuture<ModelInferResponse>> calls = send(message);
        awaitSteady(() -> service.held() + done(calls));
        assertThat(service.mostBytes()).as("bytes held by the port's calls").isLessThanOrEqualTo(2 * BUDGET);
        service.release();
        int ok = 0;
        int exhausted = 0;
        for (ListenableFuture<ModelInferResponse> call : calls) {
            Status.Code code = code(call);
            assertThat(code).isIn(Status.Code.OK, Status.Code.RESOURCE_EXHAUSTED);
            ok += code == Status.Code.OK ? 1 : 0;
            exhausted += code == Status.Code.RESOURCE_EXHAUSTED ? 1 : 0;
        }
        assertThat(exhausted).as("calls refused over the ceiling").isPositive();
        assertThat(ok).as("calls admitted within the budget").isGreaterThanOrEqualTo((int) (BUDGET / message));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (bytes.inFlight() != 0 && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertThat(bytes.inFlight()).as("bytes in flight once every call ended").isZero();
    }

    @Test
    void aClientHoldsAtMostItsShareWhileAnotherIsStillAdmitted() throws Exception {
        long share = 4L << 20;
        HoldingService holding = new HoldingService();
        GrpcBytesInFlight shared = new GrpcBytesInFlight("shared", BUDGET, share, meters);
        Server sharing = shared.apply(NettyServerBuilder.forPort(0)).maxInboundMessageSize(4 << 20)
                .addService(holding).build().start();
        ManagedChannel a = NettyChannelBuilder.forAddress("127.0.0.1", sharing.getPort()).usePlaintext().build();
        ManagedChannel b = NettyChannelBuilder.forAddress("127.0.0.1", sharing.getPort()).usePlaintext()
                .localSocketPicker(new NettyChannelBuilder.LocalSocketPicker() {
                    @Override
                    public SocketAddress createSocketAddress(SocketAddress remote, Attributes attributes) {
                        return new InetSocketAddress("127.0.0.2", 0);
                    }
                }).build();
        ModelInferRequest request = ModelInferRequest.newBuilder().setModelName("m")
                .addRawInputContents(ByteString.copyFrom(new byte[3 << 19])).build(); // 1.5 MiB
        try {
            // one at a time, so that no two interleave: two fit client A's 4 MiB, a third does not
            List<ListenableFuture<ModelInferResponse>> calls = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                calls.add(GRPCInferenceServiceGrpc.newFutureStub(a).modelInfer(request));
                awaitHeld(holding, i + 1);
            }
            ListenableFuture<ModelInferResponse> third = GRPCInferenceServiceGrpc.newFutureStub(a).modelInfer(request);
            assertThat(code(third)).as("client A's third call").isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(description(third)).contains("from this client");
            assertThat(meters.get("servegate.connections.body.client.refused").tags("port", "shared").counter()
                    .count()).isEqualTo(1);

            calls.add(GRPCInferenceServiceGrpc.newFutureStub(b).modelInfer(request));
            awaitHeld(holding, 3); // client B's call, with A at its share
            holding.release();
            for (ListenableFuture<ModelInferResponse> call : calls) {
                assertThat(code(call)).isEqualTo(Status.Code.OK);
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (shared.inFlight() != 0 && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            assertThat(shared.inFlight()).as("bytes in flight once every call ended").isZero();
            assertThat(code(GRPCInferenceServiceGrpc.newFutureStub(a).modelInfer(request)))
                    .as("client A's call once its others ended").isEqualTo(Status.Code.OK);
        } finally {
            holding.release();
            a.shutdownNow();
            b.shutdownNow();
            sharing.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static void awaitHeld(HoldingService holding, int calls) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (holding.held() != calls && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertThat(holding.held()).as("calls the service holds").isEqualTo(calls);
    }

    private static String description(ListenableFuture<?> call) throws InterruptedException {
        try {
            call.get(60, TimeUnit.SECONDS);
            return "";
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            return String.valueOf(Status.fromThrowable(e.getCause() == null ? e : e.getCause()).getDescription());
        }
    }

    private List<ListenableFuture<ModelInferResponse>> send(int size) {
        ModelInferRequest request = ModelInferRequest.newBuilder().setModelName("m")
                .addRawInputContents(ByteString.copyFrom(new byte[size])).build();
        List<ListenableFuture<ModelInferResponse>> calls = new ArrayList<>();
        for (int i = 0; i < CALLS; i++) {
            calls.add(GRPCInferenceServiceGrpc.newFutureStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS)
                    .modelInfer(request));
        }
        return calls;
    }

    /** Waits until {@code progress} stops changing for half a second (at most 30 s). */
    private static void awaitSteady(java.util.function.IntSupplier progress) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        int last = -1;
        long since = System.nanoTime();
        while (System.nanoTime() < until) {
            int now = progress.getAsInt();
            if (now != last) {
                last = now;
                since = System.nanoTime();
            } else if (System.nanoTime() - since > TimeUnit.MILLISECONDS.toNanos(500)) {
                return;
            }
            Thread.sleep(20);
        }
    }

    private static int done(List<ListenableFuture<ModelInferResponse>> calls) {
        return (int) calls.stream().filter(ListenableFuture::isDone).count();
    }

    private static Status.Code code(ListenableFuture<?> call) throws InterruptedException {
        try {
            call.get(60, TimeUnit.SECONDS);
            return Status.Code.OK;
        } catch (ExecutionException e) {
            return Status.fromThrowable(e.getCause()).getCode();
        } catch (java.util.concurrent.TimeoutException e) {
            return Status.Code.DEADLINE_EXCEEDED;
        }
    }

    /** Holds every call until {@link #release()}, then answers all, and any later call at once. */
    private final class HoldingService extends GRPCInferenceServiceGrpc.GRPCInferenceServiceImplBase {

        private final List<StreamObserver<ModelInferResponse>> held = new ArrayList<>();
        private final AtomicLong mostBytes = new AtomicLong();
        private int mostHeld;
        private boolean released;

        @Override
        public void modelInfer(ModelInferRequest request, StreamObserver<ModelInferResponse> answer) {
            mostBytes.accumulateAndGet(bytes.inFlight(), Math::max);
            synchronized (this) {
                if (!released) {
                    held.add(answer);
                    mostHeld = Math.max(mostHeld, held.size());
                    return;
                }
            }
            answer(answer);
        }

        void release() {
            List<StreamObserver<ModelInferResponse>> answers;
            synchronized (this) {
                released = true;
                answers = new ArrayList<>(held);
                held.clear();
            }
            answers.forEach(HoldingService::answer);
        }

        synchronized int held() {
            return held.size();
        }

        synchronized int mostHeld() {
            return mostHeld;
        }

        long mostBytes() {
            return mostBytes.get();
        }

        private static void answer(StreamObserver<ModelInferResponse> answer) {
            answer.onNext(ModelInferResponse.getDefaultInstance());
            answer.onCompleted();
        }
    }
}

package io.servegate.oip.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.util.concurrent.FastThreadLocalThread;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ServerReadyRequest;
import io.servegate.oip.ServerReadyResponse;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Where a call's future completes: on the channel's Netty event loop, or on gRPC's executor, as the client was made. */
class CallbackThreadTest {

    @Test
    void onTheEventLoopAnswersCompleteOnTheThreadThatReadThemWithoutAHopToAnExecutor() throws Exception {
        Thread thread = completedOn(Completion.EVENT_LOOP);
        assertThat(thread).as("%s", thread.getName()).isInstanceOf(FastThreadLocalThread.class);
        assertThat(thread.getName()).doesNotContain("executor");
    }

    @Test
    void byDefaultAnswersCompleteOnGrpcsExecutorWhereCallersMayBlock() throws Exception {
        Thread thread = completedOn(Completion.EXECUTOR);
        assertThat(thread).as("%s", thread.getName()).isNotInstanceOf(FastThreadLocalThread.class);
        assertThat(thread.getName()).contains("executor");
    }

    /** The thread a ServerReady call's future completed on, with a client of that {@code completion}. */
    private static Thread completedOn(Completion completion) throws Exception {
        CountDownLatch chained = new CountDownLatch(1);
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new GRPCInferenceServiceGrpc.GRPCInferenceServiceImplBase() {
                    @Override
                    public void serverReady(ServerReadyRequest request, StreamObserver<ServerReadyResponse> answer) {
                        try {
                            // answer only once the test has chained onto the future, so that it cannot run on the test's thread
                            chained.await(10, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        answer.onNext(ServerReadyResponse.newBuilder().setReady(true).build());
                        answer.onCompleted();
                    }
                })
                .build().start();
        try (ContainerClient client = ContainerClient.connect("127.0.0.1:" + server.getPort(), 1 << 20, completion)) {
            CompletableFuture<Thread> completedOn = client.serverReady(Duration.ofSeconds(10))
                    .thenApply(ready -> Thread.currentThread());
            chained.countDown();
            return completedOn.get(10, TimeUnit.SECONDS);
        } finally {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}

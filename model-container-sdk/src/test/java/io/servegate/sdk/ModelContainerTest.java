package io.servegate.sdk;

import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.InferResult;
import io.servegate.oip.client.TensorType;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;
import io.grpc.netty.NettyChannelBuilder;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelMetadataResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ModelContainerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
    }

    /** A real (if small) model: the index of the largest element, as Clipper's string output. */
    private static List<String> argmax(List<float[]> batch) {
        List<String> out = new ArrayList<>();
        for (float[] v : batch) {
            int best = 0;
            for (int i = 1; i < v.length; i++) {
                if (v[i] > v[best]) {
                    best = i;
                }
            }
            out.add(Integer.toString(best));
        }
        return out;
    }

    private ContainerClient start(ModelContainer.Builder<float[], String> builder) throws Exception {
        ModelContainer<float[], String> container = builder.name("argmax").version("3").host("127.0.0.1").port(0)
                .build().start();
        closeables.add(container);
        ContainerClient client = ContainerClient.connect("127.0.0.1:" + container.port());
        closeables.add(0, client);
        return client;
    }

    private static ModelContainer.Builder<float[], String> argmaxContainer() {
        return ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, ModelContainerTest::argmax);
    }

    private static List<float[]> batch(int n, int d) {
        List<float[]> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            float[] v = new float[d];
            v[i % d] = 1f;
            out.add(v);
        }
        return out;
    }

    @Test
    void answersOneOutputPerInputAndReportsServiceTime() throws Exception {
        ContainerClient client = start(argmaxContainer().inputLength(4));
        InferResult<String> result = client.infer("argmax", "", TensorType.FLOATS, batch(6, 4), TensorType.STRINGS,
                TIMEOUT).get();
        assertThat(result.outputs()).containsExactly("0", "1", "2", "3", "0", "1");
        assertThat(result.serviceTimeNanos()).isPositive();
        assertThat(result.modelVersion()).isEqualTo("3");
        assertThat(client.inferAsText("argmax", "3", TensorType.FLOATS, batch(1, 4), TIMEOUT).get().outputs())
                .containsExactly("0");
    }

    @Test
    void servesHealthAndMetadata() throws Exception {
        ContainerClient client = start(argmaxContainer().inputLength(4));
        assertThat(client.serverLive(TIMEOUT).get()).isTrue();
        assertThat(client.serverReady(TIMEOUT).get()).isTrue();
        assertThat(client.modelReady("argmax", "3", TIMEOUT).get()).isTrue();
        ModelMetadataResponse md = client.modelMetadata("argmax", "", TIMEOUT).get();
        assertThat(md.getVersionsList()).containsExactly("3");
        assertThat(md.getInputs(0).getDatatype()).isEqualTo("FP32");
        assertThat(md.getInputs(0).getShapeList()).containsExactly(-1L, 4L);
        assertThat(md.getOutputs(0).getDatatype()).isEqualTo("BYTES");
        assertStatus(client.modelReady("other", "", TIMEOUT), Status.Code.NOT_FOUND, "unknown model 'other'");
    }

    @Test
    void badRequestsGetClearStatusesAndTheServerKeepsServing() throws Exception {
        ContainerClient client = start(argmaxContainer().inputLength(4).maxMessageBytes(4096));
        assertStatus(client.infer("nope", "", TensorType.FLOATS, batch(1, 4), TensorType.STRINGS, TIMEOUT),
                Status.Code.NOT_FOUND, "unknown model 'nope'");
        assertStatus(client.infer("argmax", "9", TensorType.FLOATS, batch(1, 4), TensorType.STRINGS, TIMEOUT),
                Status.Code.NOT_FOUND, "unknown version '9'");
        assertStatus(client.infer("argmax", "", TensorType.DOUBLES, List.of(new double[4]), TensorType.STRINGS,
                TIMEOUT), Status.Code.INVALID_ARGUMENT, "datatype FP64");
        assertStatus(client.infer("argmax", "", TensorType.FLOATS, batch(2, 5), TensorType.STRINGS, TIMEOUT),
                Status.Code.INVALID_ARGUMENT, "the model expects 4");
        assertStatus(client.infer("argmax", "", TensorType.FLOATS, batch(2000, 4), TensorType.STRINGS, TIMEOUT),
                Status.Code.RESOURCE_EXHAUSTED, "");

        ManagedChannel channel = NettyChannelBuilder.forTarget("127.0.0.1:" + portOf()).usePlaintext().build();
        try {
            ModelInferRequest empty = ModelInferRequest.newBuilder().setModelName("argmax")
                    .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("FP32")
                            .addShape(0).addShape(4))
                    .addRawInputContents(com.google.protobuf.ByteString.EMPTY).build();
            assertThatThrownBy(() -> GRPCInferenceServiceGrpc.newBlockingStub(channel).modelInfer(empty))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).contains("empty batch");
                    });
        } finally {
            channel.shutdownNow();
        }

        assertThat(client.infer("argmax", "", TensorType.FLOATS, batch(2, 4), TensorType.STRINGS, TIMEOUT).get()
                .outputs()).containsExactly("0", "1");
    }

    @Test
    void failingPredictorsFailOnlyTheirBatch() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        ContainerClient client = start(ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, batch -> {
            return switch (calls.incrementAndGet()) {
                case 1 -> throw new IllegalStateException("weights not loaded");
                case 2 -> argmax(batch).subList(0, 1);
                default -> argmax(batch);
            };
        }).isolateRows(false)); // isolated, the first batch would be split and predicted again: RowIsolationTest
        assertStatus(client.infer("argmax", "", TensorType.FLOATS, batch(2, 2), TensorType.STRINGS, TIMEOUT),
                Status.Code.INTERNAL, "weights not loaded");
        assertStatus(client.infer("argmax", "", TensorType.FLOATS, batch(2, 2), TensorType.STRINGS, TIMEOUT),
                Status.Code.INTERNAL, "returned 1 outputs for a batch of 2");
        assertThat(client.infer("argmax", "", TensorType.FLOATS, batch(2, 2), TensorType.STRINGS, TIMEOUT).get()
                .outputs()).containsExactly("0", "1");
    }

    @Test
    void runsOneBatchAtATimeByDefault() throws Exception {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger maxRunning = new AtomicInteger();
        ContainerClient client = start(ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, batch -> {
            maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            Thread.sleep(20);
            running.decrementAndGet();
            return argmax(batch);
        }));
        List<CompletableFuture<InferResult<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            calls.add(client.infer("argmax", "", TensorType.FLOATS, batch(1, 2), TensorType.STRINGS, TIMEOUT));
        }
        CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        assertThat(maxRunning).hasValue(1);
    }

    @Test
    void closeDrainsInFlightBatchesAndRefusesNewOnes() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ModelContainer<float[], String> container = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                (List<float[]> batch) -> {
                    entered.countDown();
                    release.await();
                    return argmax(batch);
                }).name("argmax").host("127.0.0.1").port(0).build().start();
        ContainerClient client = ContainerClient.connect("127.0.0.1:" + container.port());
        closeables.add(client);
        CompletableFuture<InferResult<String>> inFlight =
                client.infer("argmax", "", TensorType.FLOATS, batch(3, 3), TensorType.STRINGS, TIMEOUT);
        assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
        Thread closer = new Thread(container::close);
        closer.start();
        Thread.sleep(200); // let shutdown begin while the batch is still running
        assertThat(closer.isAlive()).as("close waits for the in-flight batch").isTrue();
        release.countDown();
        assertThat(inFlight.get(5, TimeUnit.SECONDS).outputs()).containsExactly("0", "1", "2");
        closer.join(5000);
        assertThat(closer.isAlive()).isFalse();
        assertStatus(client.infer("argmax", "", TensorType.FLOATS, batch(1, 3), TensorType.STRINGS, TIMEOUT),
                Status.Code.UNAVAILABLE, "");
    }

    @Test
    void healthServiceIsServingWhileReadyAndNotServingFromTheStartOfDraining() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ModelContainer<float[], String> container = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                (List<float[]> batch) -> {
                    entered.countDown();
                    release.await();
                    return argmax(batch);
                }).name("argmax").host("127.0.0.1").port(0).build().start();
        ContainerClient client = ContainerClient.connect("127.0.0.1:" + container.port());
        closeables.add(client);
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", container.port()).usePlaintext().build();
        closeables.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS);
        // "" is what Kubernetes' grpc probe asks when no service is named
        assertThat(health.check(HealthCheckRequest.newBuilder().setService("").build()).getStatus())
                .isEqualTo(ServingStatus.SERVING);
        assertThat(health.check(HealthCheckRequest.newBuilder().setService("inference.GRPCInferenceService").build())
                .getStatus()).isEqualTo(ServingStatus.SERVING);
        assertThatThrownBy(() -> health.check(HealthCheckRequest.newBuilder().setService("no.such.Service").build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));

        // a Watch stream opened before draining sees the switch while a batch is still in flight
        BlockingQueue<ServingStatus> seen = new LinkedBlockingQueue<>();
        Context.CancellableContext watch = Context.current().withCancellation();
        watch.run(() -> HealthGrpc.newStub(channel).watch(HealthCheckRequest.newBuilder().setService("").build(),
                new StreamObserver<>() {
                    @Override
                    public void onNext(HealthCheckResponse value) {
                        seen.add(value.getStatus());
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                    }
                }));
        assertThat(seen.poll(5, TimeUnit.SECONDS)).isEqualTo(ServingStatus.SERVING);
        CompletableFuture<InferResult<String>> inFlight =
                client.infer("argmax", "", TensorType.FLOATS, batch(2, 3), TensorType.STRINGS, TIMEOUT);
        assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
        Thread closer = new Thread(container::close);
        closer.start();
        assertThat(seen.poll(5, TimeUnit.SECONDS)).isEqualTo(ServingStatus.NOT_SERVING);
        assertThat(inFlight).as("the batch is still draining").isNotDone();
        watch.cancel(null);
        release.countDown();
        assertThat(inFlight.get(5, TimeUnit.SECONDS).outputs()).containsExactly("0", "1");
        closer.join(5000);
        assertThat(closer.isAlive()).isFalse();
    }

    @Test
    void builderRejectsNonsense() {
        assertThatThrownBy(() -> argmaxContainer().build()).hasMessageContaining("model name is required");
        assertThatThrownBy(() -> argmaxContainer().name("m").concurrency(0).build())
                .hasMessageContaining("concurrency must be positive");
    }

    private int portOf() {
        for (AutoCloseable c : closeables) {
            if (c instanceof ModelContainer<?, ?> m) {
                return m.port();
            }
        }
        throw new IllegalStateException("no container");
    }

    private static void assertStatus(CompletableFuture<?> call, Status.Code code, String message) {
        assertThatThrownBy(call::get).isInstanceOf(ExecutionException.class).cause()
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(code);
                    assertThat(String.valueOf(e.getStatus().getDescription())).contains(message);
                });
    }
}

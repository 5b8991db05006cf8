package io.servegate.oip.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.InferTensorContents;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Batches of equal-sized byte arrays as one UINT8 tensor [N, L]: the encoding, its decoding
 * beside BYTES, and a client that falls back to BYTES for a server (over a real socket) that only
 * takes BYTES.
 */
class FixedSizeBytesTest {

    @Test
    void equalSizedBytesTravelAsOneUint8MatrixWithoutLengthPrefixes() {
        List<byte[]> batch = List.of(new byte[] {1, 2, 3}, new byte[] {4, 5, 6});
        EncodedTensor t = TensorType.BYTES.encodeFixedSize(batch);
        assertThat(t.datatype()).isEqualTo("UINT8");
        assertThat(t.shape()).containsExactly(2L, 3L);
        assertThat(t.raw().toByteArray()).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(TensorType.BYTES.decode("UINT8", t.shape(), t.raw())).containsExactly(batch.get(0), batch.get(1));
        assertThat(TensorType.BYTES.encodeFixedSize(List.of(new byte[2], new byte[3]))).as("lengths differ").isNull();
        assertThat(TensorType.STRINGS.encodeFixedSize(List.of("ab", "cd"))).as("strings stay BYTES").isNull();
        assertThat(TensorType.FLOATS.encodeFixedSize(List.of(new float[2]))).isNull();
    }

    @Test
    void uint8TensorsOfAnyRankDecodeToOneElementPerRow() {
        byte[] images = new byte[2 * 3 * 2 * 2];
        for (int i = 0; i < images.length; i++) {
            images[i] = (byte) i;
        }
        List<byte[]> rows = TensorType.BYTES.decode("UINT8", List.of(2L, 3L, 2L, 2L), ByteString.copyFrom(images));
        assertThat(rows).hasSize(2);
        assertThat(rows.get(1)).hasSize(12).startsWith((byte) 12).endsWith((byte) 23);
        assertThat(TensorType.BYTES.decode("UINT8", List.of(3L), ByteString.copyFrom(new byte[] {7, 8, 9})))
                .containsExactly(new byte[] {7}, new byte[] {8}, new byte[] {9});
        assertThatThrownBy(() -> TensorType.BYTES.decode("UINT8", List.of(2L, 5L), ByteString.copyFrom(images)))
                .isInstanceOf(TensorFormatException.class).hasMessageContaining("needs 10");
        assertThatThrownBy(() -> TensorType.BYTES.decode("UINT8", List.of(2L, 0L), ByteString.EMPTY))
                .hasMessageContaining("invalid dimension");
        assertThatThrownBy(() -> TensorType.BYTES.decode("UINT8", List.of(0L, 4L), ByteString.EMPTY))
                .hasMessageContaining("empty batch");
        assertThatThrownBy(() -> TensorType.BYTES.decode("UINT8", List.of(1L),
                InferTensorContents.getDefaultInstance())).hasMessageContaining("raw contents");
        assertThatThrownBy(() -> TensorType.FLOATS.decode("UINT8", List.of(1L, 4L), ByteString.copyFrom(new byte[4])))
                .hasMessageContaining("datatype UINT8");
    }

    @Test
    void aServerThatRefusesUint8GetsBytesFromThenOn() throws Exception {
        List<String> received = new CopyOnWriteArrayList<>();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new BytesOnlyServer(received)).build().start();
        try (ContainerClient client = ContainerClient.connect("127.0.0.1:" + server.getPort())) {
            List<byte[]> batch = List.of("ab".getBytes(), "cd".getBytes());
            Duration timeout = Duration.ofSeconds(10);
            assertThat(client.infer("m", "", TensorType.BYTES, batch, TensorType.STRINGS, timeout).get().outputs())
                    .containsExactly("2", "2");
            assertThat(client.infer("m", "", TensorType.BYTES, batch, TensorType.STRINGS, timeout).get().outputs())
                    .containsExactly("2", "2");
            assertThat(received).containsExactly("UINT8", "BYTES", "BYTES");
        } finally {
            server.shutdownNow().awaitTermination();
        }
    }

    @Test
    void otherFailuresOfAUint8CallAreNotRetried() throws Exception {
        List<String> received = new CopyOnWriteArrayList<>();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new BytesOnlyServer(received)).build().start();
        try (ContainerClient client = ContainerClient.connect("127.0.0.1:" + server.getPort())) {
            List<byte[]> unknownModel = List.of(new byte[1]);
            assertThatThrownBy(() -> client.infer("nope", "", TensorType.BYTES, unknownModel, TensorType.STRINGS,
                    Duration.ofSeconds(10)).get()).hasMessageContaining("NOT_FOUND");
            assertThat(received).containsExactly("UINT8");
        } finally {
            server.shutdownNow().awaitTermination();
        }
    }

    /** Like an OIP server whose model declares BYTES: answers each element's length; UINT8 is invalid. */
    private static final class BytesOnlyServer extends GRPCInferenceServiceGrpc.GRPCInferenceServiceImplBase {
        private final List<String> received;

        BytesOnlyServer(List<String> received) {
            this.received = received;
        }

        @Override
        public void modelInfer(ModelInferRequest request, StreamObserver<ModelInferResponse> answer) {
            ModelInferRequest.InferInputTensor input = request.getInputs(0);
            received.add(input.getDatatype());
            if (!request.getModelName().equals("m")) {
                answer.onError(Status.NOT_FOUND.withDescription("no model").asRuntimeException());
                return;
            }
            if (!input.getDatatype().equals("BYTES")) {
                answer.onError(Status.INVALID_ARGUMENT.withDescription("expected BYTES").asRuntimeException());
                return;
            }
            List<String> lengths = new ArrayList<>();
            for (byte[] b : TensorType.BYTES.decode("BYTES", input.getShapeList(), request.getRawInputContents(0))) {
                lengths.add(Integer.toString(b.length));
            }
            EncodedTensor out = TensorType.STRINGS.encode(lengths);
            answer.onNext(ModelInferResponse.newBuilder().setModelName("m")
                    .addOutputs(ModelInferResponse.InferOutputTensor.newBuilder().setName("output")
                            .setDatatype(out.datatype()).addAllShape(out.shape()))
                    .addRawOutputContents(out.raw()).build());
            answer.onCompleted();
        }
    }
}

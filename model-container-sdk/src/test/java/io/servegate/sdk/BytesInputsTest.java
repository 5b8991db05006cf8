package io.servegate.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A {@code bytes} model served over a real socket takes a batch as one UINT8 tensor [N, d1, ...]
 * (how the gateway sends equal-sized inputs, and how a client sends a batch of images) as well as
 * a BYTES tensor [N]; a batch of 64 images of 150,528 bytes fits the default message limit.
 */
class BytesInputsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final int IMAGE = 3 * 224 * 224;

    private ModelContainer<byte[], String> container;
    private final List<Integer> batchSizes = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        container = ModelContainer.<byte[], String>builder(TensorType.BYTES, TensorType.STRINGS, batch -> {
            batchSizes.add(batch.size());
            List<String> out = new ArrayList<>();
            for (byte[] b : batch) {
                out.add(b.length + ":" + crc(b));
            }
            return out;
        }).name("crc").version("1").host("127.0.0.1").port(0).build().start();
    }

    @AfterEach
    void stop() throws Exception {
        container.close();
    }

    @Test
    void aBatchOfLargeImagesArrivesWhole() throws Exception {
        List<byte[]> images = new ArrayList<>();
        Random random = new Random(3);
        for (int i = 0; i < 64; i++) {
            byte[] b = new byte[IMAGE];
            random.nextBytes(b);
            images.add(b);
        }
        try (ContainerClient client = ContainerClient.connect("127.0.0.1:" + container.port())) {
            List<String> out = client.inferAsText("crc", "", TensorType.BYTES, images, TIMEOUT).get().outputs();
            assertThat(out).hasSize(64);
            for (int i = 0; i < 64; i++) {
                assertThat(out.get(i)).isEqualTo(IMAGE + ":" + crc(images.get(i)));
            }
            // unequal sizes travel as BYTES
            assertThat(client.inferAsText("crc", "", TensorType.BYTES, List.of(new byte[1], new byte[3]), TIMEOUT)
                    .get().outputs()).containsExactly("1:" + crc(new byte[1]), "3:" + crc(new byte[3]));
        }
        assertThat(batchSizes).containsExactly(64, 2);
    }

    @Test
    void uint8TensorsOfAnyRankAreOneInputPerRowAndMalformedOnesAreInvalid() throws Exception {
        ManagedChannel channel = NettyChannelBuilder.forTarget("127.0.0.1:" + container.port()).usePlaintext().build();
        try {
            var stub = GRPCInferenceServiceGrpc.newBlockingStub(channel);
            byte[] two = new byte[2 * 3 * 4 * 4];
            two[48] = 1;
            ModelInferResponse r = stub.modelInfer(uint8(List.of(2L, 3L, 4L, 4L), two));
            List<String> out = TensorType.STRINGS.decode("BYTES", r.getOutputs(0).getShapeList(),
                    r.getRawOutputContents(0));
            assertThat(out).hasSize(2).allSatisfy(o -> assertThat(o).startsWith("48:"));
            assertThat(out.get(0)).isNotEqualTo(out.get(1));
            assertThatThrownBy(() -> stub.modelInfer(uint8(List.of(2L, 5L), two)))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).contains("UINT8 needs 10");
                    });
        } finally {
            channel.shutdownNow();
        }
    }

    private static long crc(byte[] b) {
        CRC32 crc = new CRC32();
        crc.update(b);
        return crc.getValue();
    }

    private static ModelInferRequest uint8(List<Long> shape, byte[] raw) {
        return ModelInferRequest.newBuilder().setModelName("crc")
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("UINT8")
                        .addAllShape(shape))
                .addRawInputContents(ByteString.copyFrom(raw)).build();
    }
}

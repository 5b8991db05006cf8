package io.servegate.containers.onnx;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.WireFormat;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.ServiceTime;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A client that knows only the Open Inference Protocol's published field numbers (as Triton's,
 * KServe's or MLServer's clients do), and none of our generated classes, gets the same answers
 * as our typed client: our proto and our server speak the protocol on the wire.
 */
class WireCompatibilityTest {

    private static final String MODEL = "fmnist-mlp";
    private static final int N = 16;

    /** inference.GRPCInferenceService/ModelInfer with raw bytes in and out. */
    private static final MethodDescriptor<byte[], byte[]> MODEL_INFER = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName("inference.GRPCInferenceService", "ModelInfer"))
            .setRequestMarshaller(new BytesMarshaller())
            .setResponseMarshaller(new BytesMarshaller())
            .build();

    @Test
    void handEncodedRequestGetsTheTypedClientsLabels() throws Exception {
        List<float[]> images = FashionMnist.testSet().images().subList(500, 500 + N);
        try (OnnxPredictor predictor = new OnnxPredictor(ModelTable.named(MODEL).path());
                ModelContainer<float[], String> container = OnnxContainer.builder(predictor, TensorType.FLOATS)
                        .name(MODEL).host("127.0.0.1").port(0).build().start();
                ContainerClient typed = ContainerClient.connect("127.0.0.1:" + container.port())) {
            List<String> expected = typed.infer(MODEL, "", TensorType.FLOATS, images, TensorType.STRINGS,
                    Duration.ofSeconds(30)).get().outputs();

            ManagedChannel channel = ManagedChannelBuilder.forTarget("127.0.0.1:" + container.port())
                    .usePlaintext().build();
            byte[] responseBytes;
            try {
                responseBytes = ClientCalls.blockingUnaryCall(channel, MODEL_INFER,
                        CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), encodeRequest(images));
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            Response response = Response.parse(responseBytes);

            assertThat(response.modelName).isEqualTo(MODEL);
            assertThat(response.outputs).hasSize(1);
            assertThat(response.outputs.get(0).name).isEqualTo("output");
            assertThat(response.outputs.get(0).datatype).isEqualTo("BYTES");
            assertThat(response.outputs.get(0).shape).containsExactly((long) N);
            assertThat(response.int64Params).containsEntry(ServiceTime.BATCH_SIZE, (long) N);
            assertThat(response.int64Params.get(ServiceTime.SERVICE_TIME_NS)).isPositive();
            assertThat(response.rawOutputs).hasSize(1);
            assertThat(decodeBytesTensor(response.rawOutputs.get(0), N)).isEqualTo(expected);
        }
    }

    /** ModelInferRequest: model_name=1, inputs=5 {name=1, datatype=2, shape=3 packed}, raw_input_contents=7. */
    private static byte[] encodeRequest(List<float[]> images) throws IOException {
        int d = images.get(0).length;
        ByteArrayOutputStream tensorBytes = new ByteArrayOutputStream();
        CodedOutputStream tensor = CodedOutputStream.newInstance(tensorBytes);
        tensor.writeString(1, "input");
        tensor.writeString(2, "FP32");
        long[] shape = {images.size(), d};
        int packedSize = 0;
        for (long dim : shape) {
            packedSize += CodedOutputStream.computeInt64SizeNoTag(dim);
        }
        tensor.writeTag(3, WireFormat.WIRETYPE_LENGTH_DELIMITED);
        tensor.writeUInt32NoTag(packedSize);
        for (long dim : shape) {
            tensor.writeInt64NoTag(dim);
        }
        tensor.flush();

        ByteBuffer raw = ByteBuffer.allocate(images.size() * d * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        images.forEach(image -> {
            for (float f : image) {
                raw.putFloat(f);
            }
        });

        ByteArrayOutputStream requestBytes = new ByteArrayOutputStream();
        CodedOutputStream request = CodedOutputStream.newInstance(requestBytes);
        request.writeString(1, MODEL);
        request.writeByteArray(5, tensorBytes.toByteArray());
        request.writeByteArray(7, raw.array());
        request.flush();
        return requestBytes.toByteArray();
    }

    /** A BYTES tensor's raw contents: each element a 4-byte little-endian length, then its bytes. */
    private static List<String> decodeBytesTensor(byte[] raw, int n) {
        ByteBuffer buf = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] element = new byte[buf.getInt()];
            buf.get(element);
            out.add(new String(element, StandardCharsets.UTF_8));
        }
        assertThat(buf.hasRemaining()).isFalse();
        return out;
    }

    /** The parts of a ModelInferResponse this test checks, parsed by field number. */
    private static final class Response {
        String modelName;
        final Map<String, Long> int64Params = new HashMap<>();
        final List<Output> outputs = new ArrayList<>();
        final List<byte[]> rawOutputs = new ArrayList<>();

        /** model_name=1, parameters=4 (map entries), outputs=5, raw_output_contents=6. */
        static Response parse(byte[] bytes) throws IOException {
            Response r = new Response();
            CodedInputStream in = CodedInputStream.newInstance(bytes);
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                switch (WireFormat.getTagFieldNumber(tag)) {
                    case 1 -> r.modelName = in.readString();
                    case 4 -> r.parseParameter(in.readByteArray());
                    case 5 -> r.outputs.add(Output.parse(in.readByteArray()));
                    case 6 -> r.rawOutputs.add(in.readByteArray());
                    default -> in.skipField(tag);
                }
            }
            return r;
        }

        /** A map entry: key=1, value=2 (InferParameter: int64_param=2). */
        private void parseParameter(byte[] entry) throws IOException {
            CodedInputStream in = CodedInputStream.newInstance(entry);
            String key = null;
            Long value = null;
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                switch (WireFormat.getTagFieldNumber(tag)) {
                    case 1 -> key = in.readString();
                    case 2 -> value = int64Param(in.readByteArray());
                    default -> in.skipField(tag);
                }
            }
            if (key != null && value != null) {
                int64Params.put(key, value);
            }
        }

        private static Long int64Param(byte[] parameter) throws IOException {
            CodedInputStream in = CodedInputStream.newInstance(parameter);
            Long value = null;
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                if (WireFormat.getTagFieldNumber(tag) == 2) {
                    value = in.readInt64();
                } else {
                    in.skipField(tag);
                }
            }
            return value;
        }
    }

    /** InferOutputTensor: name=1, datatype=2, shape=3 (packed, or unpacked as parsers must accept). */
    private static final class Output {
        String name;
        String datatype;
        final List<Long> shape = new ArrayList<>();

        static Output parse(byte[] bytes) throws IOException {
            Output o = new Output();
            CodedInputStream in = CodedInputStream.newInstance(bytes);
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                int field = WireFormat.getTagFieldNumber(tag);
                if (field == 1) {
                    o.name = in.readString();
                } else if (field == 2) {
                    o.datatype = in.readString();
                } else if (field == 3 && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                    int limit = in.pushLimit(in.readRawVarint32());
                    while (in.getBytesUntilLimit() > 0) {
                        o.shape.add(in.readInt64());
                    }
                    in.popLimit(limit);
                } else if (field == 3) {
                    o.shape.add(in.readInt64());
                } else {
                    in.skipField(tag);
                }
            }
            return o;
        }
    }

    private static final class BytesMarshaller implements MethodDescriptor.Marshaller<byte[]> {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}

package io.servegate.sdk;

import io.servegate.oip.client.TensorType;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.WireFormat;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ModelRepositoryParameter;
import io.servegate.oip.RepositoryIndexRequest;
import io.servegate.oip.RepositoryIndexResponse;
import io.servegate.oip.RepositoryModelLoadRequest;
import io.servegate.oip.RepositoryModelUnloadRequest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The model repository messages and methods on the wire, with only the field numbers of Triton's
 * and KServe's published {@code grpc_service.proto}: what their clients send parses into our
 * generated classes, and what our server sends parses by those numbers.
 */
class RepositoryWireCompatibilityTest {

    private static final String SERVICE = "inference.GRPCInferenceService";

    @Test
    void handEncodedRequestsParseIntoTheGeneratedClasses() throws IOException {
        RepositoryIndexRequest index = RepositoryIndexRequest.parseFrom(encode(out -> {
            out.writeString(1, "models");      // repository_name
            out.writeBool(2, true);            // ready
        }));
        assertThat(index.getRepositoryName()).isEqualTo("models");
        assertThat(index.getReady()).isTrue();

        byte[] stringVersion = encode(out -> {
            out.writeString(3, "2");           // ModelRepositoryParameter.string_param
        });
        RepositoryModelLoadRequest load = RepositoryModelLoadRequest.parseFrom(encode(out -> {
            out.writeString(1, "");            // repository_name
            out.writeString(2, "fmnist-cnn");  // model_name
            out.writeByteArray(3, mapEntry("version", stringVersion)); // parameters
        }));
        assertThat(load.getModelName()).isEqualTo("fmnist-cnn");
        assertThat(load.getParametersOrThrow("version").getStringParam()).isEqualTo("2");

        byte[] int64Version = encode(out -> out.writeInt64(2, 7));  // ModelRepositoryParameter.int64_param
        byte[] boolFlag = encode(out -> out.writeBool(1, true));     // bool_param
        byte[] bytesValue = encode(out -> out.writeByteArray(4, new byte[] {1, 2})); // bytes_param
        RepositoryModelUnloadRequest unload = RepositoryModelUnloadRequest.parseFrom(encode(out -> {
            out.writeString(1, "repo");
            out.writeString(2, "fmnist-mlp");
            out.writeByteArray(3, mapEntry("version", int64Version));
            out.writeByteArray(3, mapEntry("unload_dependents", boolFlag));
            out.writeByteArray(3, mapEntry("blob", bytesValue));
        }));
        assertThat(unload.getRepositoryName()).isEqualTo("repo");
        assertThat(unload.getModelName()).isEqualTo("fmnist-mlp");
        assertThat(unload.getParametersOrThrow("version").getInt64Param()).isEqualTo(7);
        assertThat(unload.getParametersOrThrow("unload_dependents").getBoolParam()).isTrue();
        assertThat(unload.getParametersOrThrow("blob").getBytesParam()).isEqualTo(ByteString.copyFrom(new byte[] {1, 2}));
    }

    @Test
    void generatedMessagesCarryTheirFieldsUnderTheSpecsNumbers() throws IOException {
        byte[] wire = RepositoryIndexResponse.newBuilder()
                .addModels(RepositoryIndexResponse.ModelIndex.newBuilder()
                        .setName("a").setVersion("1").setState("READY").setReason("load_time_ns=5 size_bytes=9"))
                .build().toByteArray();
        List<Map<Integer, String>> models = parseIndex(wire);
        assertThat(models).containsExactly(Map.of(1, "a", 2, "1", 3, "READY", 4, "load_time_ns=5 size_bytes=9"));

        byte[] param = ModelRepositoryParameter.newBuilder().setInt64Param(42).build().toByteArray();
        CodedInputStream in = CodedInputStream.newInstance(param);
        int tag = in.readTag();
        assertThat(WireFormat.getTagFieldNumber(tag)).isEqualTo(2);
        assertThat(in.readInt64()).isEqualTo(42);
    }

    @Test
    void aClientWithOnlyTheFieldNumbersLoadsAndListsModelsOverGrpc(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.model"), "a");
        Files.writeString(dir.resolve("b.model"), "b");
        FileModelRepository<String, String> repository = FileModelRepository.inDirectory(dir, "model",
                file -> new LoadedModel<String, String>(batch -> batch, -1, () -> { }));
        try (ModelContainer<String, String> container = ModelContainer.builder(TensorType.STRINGS, TensorType.STRINGS,
                repository).host("127.0.0.1").port(0).build().start()) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", container.port()).usePlaintext()
                    .build();
            try {
                byte[] loaded = ClientCalls.blockingUnaryCall(channel, method("RepositoryModelLoad"),
                        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                        encode(out -> out.writeString(2, "b")));
                assertThat(loaded).isEmpty(); // RepositoryModelLoadResponse has no fields
                byte[] index = ClientCalls.blockingUnaryCall(channel, method("RepositoryIndex"),
                        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), new byte[0]);
                List<Map<Integer, String>> models = parseIndex(index);
                assertThat(models).hasSize(2);
                assertThat(models.get(0)).containsEntry(1, "a").containsEntry(2, "1").containsEntry(3, "UNAVAILABLE");
                assertThat(models.get(1)).containsEntry(1, "b").containsEntry(3, "READY");
                assertThat(models.get(1).get(4)).matches("load_time_ns=[0-9]+ size_bytes=1");
            } finally {
                channel.shutdownNow();
            }
        }
        assertThat(GRPCInferenceServiceGrpc.getRepositoryModelUnloadMethod().getFullMethodName())
                .isEqualTo(SERVICE + "/RepositoryModelUnload");
    }

    /** RepositoryIndexResponse by field numbers: models = 1; in each, name 1, version 2, state 3, reason 4. */
    private static List<Map<Integer, String>> parseIndex(byte[] wire) throws IOException {
        List<Map<Integer, String>> models = new ArrayList<>();
        CodedInputStream in = CodedInputStream.newInstance(wire);
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            assertThat(WireFormat.getTagFieldNumber(tag)).isEqualTo(1);
            CodedInputStream model = CodedInputStream.newInstance(in.readByteArray());
            Map<Integer, String> fields = new LinkedHashMap<>();
            for (int t = model.readTag(); t != 0; t = model.readTag()) {
                fields.put(WireFormat.getTagFieldNumber(t), model.readString());
            }
            models.add(fields);
        }
        return models;
    }

    /** A map<string, ModelRepositoryParameter> entry: key = 1, value = 2. */
    private static byte[] mapEntry(String key, byte[] value) throws IOException {
        return encode(out -> {
            out.writeString(1, key);
            out.writeByteArray(2, value);
        });
    }

    private interface Writer {
        void write(CodedOutputStream out) throws IOException;
    }

    private static byte[] encode(Writer writer) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        writer.write(out);
        out.flush();
        return bytes.toByteArray();
    }

    private static MethodDescriptor<byte[], byte[]> method(String name) {
        return MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
                .setRequestMarshaller(new RawMarshaller())
                .setResponseMarshaller(new RawMarshaller())
                .build();
    }

    /** Bytes as they are: the test encodes and decodes the messages itself. */
    private static final class RawMarshaller implements MethodDescriptor.Marshaller<byte[]> {
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

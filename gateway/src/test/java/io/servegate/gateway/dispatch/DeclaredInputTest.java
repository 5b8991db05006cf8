package io.servegate.gateway.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.oip.ModelMetadataResponse;
import io.servegate.oip.client.TensorType;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a model's metadata declares, how replicas' declarations merge, and which request shapes fit. */
class DeclaredInputTest {

    private static ModelMetadataResponse metadata(String datatype, long... shape) {
        ModelMetadataResponse.TensorMetadata.Builder t = ModelMetadataResponse.TensorMetadata.newBuilder()
                .setName("images").setDatatype(datatype);
        for (long d : shape) {
            t.addShape(d);
        }
        return ModelMetadataResponse.newBuilder().setName("m").addInputs(t).build();
    }

    @Test
    void aBytesInputDeclaredAsUint8HasAByteLengthOthersHaveNone() {
        DeclaredInput image = DeclaredInput.of(metadata("UINT8", -1, 3, 224, 224), TensorType.BYTES);
        assertThat(image.rowLength()).isEqualTo(150_528);
        assertThat(image.shape()).containsExactly(-1L, 3L, 224L, 224L);
        assertThat(DeclaredInput.of(metadata("BYTES", -1), TensorType.BYTES).rowLength()).isEqualTo(-1);
        assertThat(DeclaredInput.of(metadata("BYTES", -1, 1), TensorType.STRINGS).rowLength())
                .as("one string per row: no length").isEqualTo(-1);
        assertThat(DeclaredInput.of(metadata("FP32", -1, 2, 2), TensorType.FLOATS).rowLength()).isEqualTo(4);
        assertThat(DeclaredInput.of(metadata("FP32", -1, -1), TensorType.FLOATS).rowLength()).isEqualTo(-1);
        assertThat(DeclaredInput.of(ModelMetadataResponse.getDefaultInstance(), TensorType.FLOATS))
                .isSameAs(DeclaredInput.UNKNOWN);
    }

    @Test
    void aBytesInputDeclaredAsBytesTakesItsLengthFromTheInputBytesParameter() {
        ModelMetadataResponse python = metadata("BYTES", -1).toBuilder().putParameters(DeclaredInput.INPUT_BYTES,
                io.servegate.oip.InferParameter.newBuilder().setInt64Param(150_528).build()).build();
        assertThat(DeclaredInput.of(python, TensorType.BYTES).rowLength()).isEqualTo(150_528);
        assertThat(DeclaredInput.of(python, TensorType.STRINGS).rowLength()).as("strings: no length").isEqualTo(-1);
        ModelMetadataResponse zero = metadata("BYTES", -1).toBuilder().putParameters(DeclaredInput.INPUT_BYTES,
                io.servegate.oip.InferParameter.newBuilder().setInt64Param(0).build()).build();
        assertThat(DeclaredInput.of(zero, TensorType.BYTES).rowLength()).isEqualTo(-1);
    }

    @Test
    void replicasThatDisagreeLeaveThatDimensionUnchecked() {
        DeclaredInput a = DeclaredInput.of(metadata("UINT8", -1, 3, 224, 224), TensorType.BYTES);
        DeclaredInput b = DeclaredInput.of(metadata("UINT8", -1, 3, 299, 299), TensorType.BYTES);
        assertThat(DeclaredInput.UNKNOWN.merge(a).merge(a)).isSameAs(a);
        assertThat(a.merge(DeclaredInput.UNKNOWN)).isSameAs(a);
        DeclaredInput both = a.merge(b);
        assertThat(both.dims()).containsExactly(3L, -1L, -1L);
        assertThat(both.rowLength()).isEqualTo(-1);
        assertThat(both.shapeProblem("UINT8", List.of(2L, 3L, 10L, 10L))).isNull();
        assertThat(both.shapeProblem("UINT8", List.of(2L, 4L, 10L, 10L))).contains("[-1, 3, -1, -1]");
        DeclaredInput flat = DeclaredInput.of(metadata("FP32", -1, 8), TensorType.FLOATS);
        assertThat(a.merge(flat).datatype()).isNull();
        assertThat(a.merge(flat).dims()).as("ranks differ").isNull();
        assertThat(a.merge(flat).known()).isFalse();
    }

    @Test
    void requestShapesAreCheckedOnlyWhereASizeIsDeclared() {
        DeclaredInput image = DeclaredInput.of(metadata("UINT8", -1, 3, 8, 8), TensorType.BYTES);
        assertThat(image.shapeProblem("UINT8", List.of(5L, 3L, 8L, 8L))).isNull();
        assertThat(image.shapeProblem("UINT8", List.of(5L, 192L)))
                .isEqualTo("shape [5, 192] does not match the shape [-1, 3, 8, 8] the model's containers declare "
                        + "for UINT8 input 'images'");
        assertThat(image.shapeProblem("BYTES", List.of(5L))).as("another datatype: rows checked by length").isNull();
        DeclaredInput any = DeclaredInput.of(metadata("FP32", -1, -1), TensorType.FLOATS);
        assertThat(any.shapeProblem("FP32", List.of(5L))).isNull();
    }
}

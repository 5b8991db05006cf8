package io.servegate.oip.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.servegate.oip.InferTensorContents;
import java.util.List;
import org.junit.jupiter.api.Test;

class TensorTypeTest {

    @Test
    void numericBatchTravelsAsOneLittleEndianMatrix() {
        EncodedTensor t = TensorType.FLOATS.encode(List.of(new float[] {1f, 2f}, new float[] {3f, 4f}));
        assertThat(t.datatype()).isEqualTo("FP32");
        assertThat(t.shape()).containsExactly(2L, 2L);
        assertThat(t.raw().size()).isEqualTo(16);
        // 1.0f little-endian is 00 00 80 3f
        assertThat(t.raw().byteAt(3)).isEqualTo((byte) 0x3f);
        assertThat(TensorType.FLOATS.decode("FP32", t.shape(), t.raw()))
                .containsExactly(new float[] {1f, 2f}, new float[] {3f, 4f});
    }

    @Test
    void everyTypeRoundTrips() {
        roundTrip(TensorType.INTS, List.of(new int[] {1, -2, 3}, new int[] {4, 5, Integer.MIN_VALUE}));
        roundTrip(TensorType.DOUBLES, List.of(new double[] {Math.PI}, new double[] {-0.0}));
        roundTrip(TensorType.BYTES, List.of(new byte[] {0, 1, 2}, new byte[0], new byte[] {(byte) 0xff}));
        roundTrip(TensorType.STRINGS, List.of("héllo", "", "a longer string"));
    }

    @Test
    void stringsOfDifferentLengthsTravelAsBytesVector() {
        EncodedTensor t = TensorType.STRINGS.encode(List.of("a", "bcd"));
        assertThat(t.shape()).containsExactly(2L);
        assertThat(t.raw().size()).isEqualTo(4 + 1 + 4 + 3);
    }

    @Test
    void typedContentsAreDecodedToo() {
        InferTensorContents contents = InferTensorContents.newBuilder()
                .addAllFp64Contents(List.of(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)).build();
        assertThat(TensorType.DOUBLES.decode("FP64", List.of(3L, 2L), contents))
                .containsExactly(new double[] {1, 2}, new double[] {3, 4}, new double[] {5, 6});
        InferTensorContents strings = InferTensorContents.newBuilder()
                .addBytesContents(ByteString.copyFromUtf8("x")).build();
        assertThat(TensorType.STRINGS.decode("BYTES", List.of(1L), strings)).containsExactly("x");
    }

    @Test
    void malformedTensorsAreRejectedWithTheReason() {
        EncodedTensor t = TensorType.INTS.encode(List.of(new int[] {1, 2}));
        assertThatThrownBy(() -> TensorType.INTS.decode("FP32", t.shape(), t.raw()))
                .isInstanceOf(TensorFormatException.class).hasMessageContaining("datatype FP32");
        assertThatThrownBy(() -> TensorType.INTS.decode("INT32", List.of(1L, 3L), t.raw()))
                .hasMessageContaining("needs 12");
        assertThatThrownBy(() -> TensorType.INTS.decode("INT32", List.of(0L, 2L), ByteString.EMPTY))
                .hasMessageContaining("empty batch");
        assertThatThrownBy(() -> TensorType.INTS.decode("INT32", List.of(1L, 1L, 2L), t.raw()))
                .hasMessageContaining("must be [N] or [N, d]");
        assertThatThrownBy(() -> TensorType.FLOATS.encode(List.of(new float[2], new float[3])))
                .hasMessageContaining("equal length");
        ByteString truncated = TensorType.STRINGS.encode(List.of("abc")).raw().substring(0, 5);
        assertThatThrownBy(() -> TensorType.STRINGS.decode("BYTES", List.of(1L), truncated))
                .hasMessageContaining("declares length 3");
        ByteString trailing = TensorType.STRINGS.encode(List.of("a", "b")).raw();
        assertThatThrownBy(() -> TensorType.STRINGS.decode("BYTES", List.of(1L), trailing))
                .hasMessageContaining("beyond the 1 elements");
    }

    @Test
    void namesFollowClipper() {
        assertThat(TensorType.forName("Floats")).isSameAs(TensorType.FLOATS);
        assertThatThrownBy(() -> TensorType.forName("tensors")).hasMessageContaining("expected one of ints");
    }

    @Test
    void renderingGivesClipperStyleText() {
        assertThat(TensorType.INTS.render(new int[] {7})).isEqualTo("7");
        assertThat(TensorType.DOUBLES.render(new double[] {0.5, 1.5})).isEqualTo("[0.5,1.5]");
        assertThat(TensorType.BYTES.render("ok".getBytes())).isEqualTo("ok");
    }

    private static <T> void roundTrip(TensorType<T> type, List<T> values) {
        EncodedTensor t = type.encode(values);
        assertThat(type.decode(t.datatype(), t.shape(), t.raw())).containsExactlyElementsOf(values);
    }
}

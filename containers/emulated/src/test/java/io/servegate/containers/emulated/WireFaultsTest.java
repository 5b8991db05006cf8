package io.servegate.containers.emulated;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.client.EncodedTensor;
import io.servegate.oip.client.TensorType;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The wire faults answer every call, corrupted as asked, whatever the batch's size. */
class WireFaultsTest {

    private static ModelInferResponse labels(List<String> labels) {
        EncodedTensor t = TensorType.STRINGS.encode(labels);
        return ModelInferResponse.newBuilder()
                .addOutputs(ModelInferResponse.InferOutputTensor.newBuilder().setName("output").setDatatype(t.datatype())
                        .addAllShape(t.shape()))
                .addRawOutputContents(t.raw())
                .build();
    }

    private static List<String> decoded(ModelInferResponse r) {
        ModelInferResponse.InferOutputTensor out = r.getOutputs(0);
        return TensorType.STRINGS.decode(out.getDatatype(), out.getShapeList(), r.getRawOutputContents(0));
    }

    @Test
    void wrongCountDropsTheLastOutput() {
        WireFaults faults = new WireFaults(WireFaults.Kind.WRONG_COUNT, null);
        assertThat(decoded(faults.corrupt(labels(List.of("a", "b", "c"))))).containsExactly("a", "b");
    }

    @Test
    void wrongCountAnswersABatchOfOneWithNoOutput() {
        ModelInferResponse r = new WireFaults(WireFaults.Kind.WRONG_COUNT, null).corrupt(labels(List.of("a")));
        assertThat(r.getOutputs(0).getShape(0)).isZero();
        assertThat(r.getRawOutputContents(0).isEmpty()).isTrue();
    }
}

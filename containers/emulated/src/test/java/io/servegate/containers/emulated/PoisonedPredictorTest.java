package io.servegate.containers.emulated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servegate.sdk.InvalidInputException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class PoisonedPredictorTest {

    @Test
    void raisesOnABatchWithARowHoldingTheValueAndPredictsOthers() throws Exception {
        PoisonedPredictor<float[]> p = new PoisonedPredictor<>(new EmulatedPredictor<>(0, 0, 10), "7");
        assertThat(p.predictBatch(List.of(new float[] {1, 2}, new float[] {7.5f, 3}))).containsExactly("1", "0");
        assertThatThrownBy(() -> p.predictBatch(List.of(new float[] {1, 2}, new float[] {3, 7})))
                .isInstanceOf(InvalidInputException.class).hasMessage("the model rejects inputs holding 7");
    }

    @Test
    void matchesEveryInputType() {
        assertThat(new PoisonedPredictor<int[]>(new EmulatedPredictor<>(0, 0, 10), "-3").holds(new int[] {1, -3}))
                .isTrue();
        assertThat(new PoisonedPredictor<double[]>(new EmulatedPredictor<>(0, 0, 10), "0.25")
                .holds(new double[] {0.25})).isTrue();
        assertThat(new PoisonedPredictor<String>(new EmulatedPredictor<>(0, 0, 10), "bad").holds("a bad row"))
                .isTrue();
        assertThat(new PoisonedPredictor<byte[]>(new EmulatedPredictor<>(0, 0, 10), "JFIF")
                .holds("..JFIF..".getBytes(StandardCharsets.ISO_8859_1))).isTrue();
        assertThat(new PoisonedPredictor<float[]>(new EmulatedPredictor<>(0, 0, 10), "x").holds(new float[] {0}))
                .as("a value that is no number matches no numeric row").isFalse();
    }
}

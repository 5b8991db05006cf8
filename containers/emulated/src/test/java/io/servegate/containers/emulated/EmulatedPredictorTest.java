package io.servegate.containers.emulated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class EmulatedPredictorTest {

    @Test
    void answersOneLabelPerInput() {
        EmulatedPredictor<float[]> p = new EmulatedPredictor<>(0, 0, 10);
        for (int n : new int[] {1, 7, 64}) {
            List<float[]> batch = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                batch.add(new float[] {i, 0, 1});
            }
            assertThat(p.predictBatch(batch)).hasSize(n);
        }
    }

    @Test
    void labelsNumericVectorsByArgmaxModuloClasses() {
        EmulatedPredictor<float[]> floats = new EmulatedPredictor<>(0, 0, 10);
        assertThat(floats.predictBatch(List.of(
                new float[] {0.1f, 0.9f, 0.3f},
                new float[] {5, 5, 1},          // tie: the first maximum wins
                new float[] {Float.NaN, -1, -2},  // NaN never wins
                oneHot(784, 13))))
                .containsExactly("1", "0", "1", "3");
        assertThat(new EmulatedPredictor<double[]>(0, 0, 4).label(new double[] {0, 0, 0, 0, 0, 9})).isEqualTo(1);
        assertThat(new EmulatedPredictor<int[]>(0, 0, 10).label(new int[] {-5, -1, -3})).isEqualTo(1);
    }

    @Test
    void labelsAreDeterministicAcrossInstancesAndBatches() {
        Random random = new Random(42);
        List<float[]> inputs = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            float[] v = new float[784];
            for (int j = 0; j < v.length; j++) {
                v[j] = random.nextFloat();
            }
            inputs.add(v);
        }
        List<String> whole = new EmulatedPredictor<float[]>(0, 0, 10).predictBatch(inputs);
        List<String> pieces = new ArrayList<>();
        EmulatedPredictor<float[]> other = new EmulatedPredictor<>(0, 0, 10);
        for (int i = 0; i < inputs.size(); i += 8) {
            pieces.addAll(other.predictBatch(inputs.subList(i, Math.min(inputs.size(), i + 8))));
        }
        assertThat(pieces).isEqualTo(whole);
        // Random inputs spread over the classes rather than collapsing onto one label.
        assertThat(whole.stream().distinct().count()).isGreaterThan(3);
    }

    @Test
    void labelsStringsAndBytesByStableHash() {
        EmulatedPredictor<String> strings = new EmulatedPredictor<>(0, 0, 10);
        // CRC-32("hello") = 0x3610A686 = 907060870, so its label is 0 of 10 classes and 2 of 7.
        assertThat(strings.label("hello")).isEqualTo(0);
        assertThat(new EmulatedPredictor<String>(0, 0, 7).label("hello")).isEqualTo(2);
        assertThat(new EmulatedPredictor<byte[]>(0, 0, 10).label("hello".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .isEqualTo(strings.label("hello"));
        List<String> labels = strings.predictBatch(List.of("a", "b", "c", "a"));
        assertThat(labels.get(3)).isEqualTo(labels.get(0));
        assertThat(labels).allSatisfy(l -> assertThat(Integer.parseInt(l)).isBetween(0, 9));
    }

    @Test
    void serviceTimeIsBetaPlusAlphaTimesBatch() {
        EmulatedPredictor<float[]> p = new EmulatedPredictor<>(5, 0.5, 10);
        assertThat(p.serviceTimeNanos(1)).isEqualTo(5_500_000L);
        assertThat(p.serviceTimeNanos(32)).isEqualTo(21_000_000L);
    }

    @Test
    void transferTimeIsProportionalToTheInputBytes() {
        // 150 KB inputs (37,500 floats) at 3,000,000 bytes/ms: 0.05 ms each
        EmulatedPredictor<float[]> p = new EmulatedPredictor<>(3.4, 0.05, 10, () -> 1, transfer(3_000_000));
        List<float[]> batch = List.of(new float[37_500], new float[37_500], new float[37_500], new float[37_500]);
        assertThat(p.transferNanos(batch)).isEqualTo(200_000L);
        assertThat(new EmulatedPredictor<String>(0, 0, 10, () -> 1, transfer(1)).transferNanos(List.of("héllo")))
                .as("UTF-8 bytes").isEqualTo(6_000_000L);
        assertThat(new EmulatedPredictor<float[]>(3.4, 0.05, 10).transferNanos(batch)).isZero();
    }

    @Test
    void rejectsInvalidConfiguration() {
        assertThatThrownBy(() -> transfer(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Pathologies(0, Stalls.NONE, -1, 0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Pathologies(0, Stalls.NONE, 0, Double.NaN, 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new EmulatedPredictor<float[]>(-1, 0, 10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new EmulatedPredictor<float[]>(0, Double.NaN, 10))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new EmulatedPredictor<float[]>(0, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theFirstBatchOfEachSizeIsCold() {
        EmulatedPredictor<float[]> p = new EmulatedPredictor<>(10, 1, 10, () -> 1,
                new Pathologies(0, Stalls.NONE, 300_000_000L, 0, 1));
        assertThat(p.batchNanos(batch(4))).isEqualTo(314_000_000L);
        assertThat(p.batchNanos(batch(4))).isEqualTo(14_000_000L);
        assertThat(p.batchNanos(batch(2))).as("another size is cold again").isEqualTo(312_000_000L);
        assertThat(p.batchNanos(batch(2))).isEqualTo(12_000_000L);
    }

    @Test
    void jitterKeepsTheMeanGrowsATailAndRepeatsWithItsSeed() {
        Pathologies jitter = new Pathologies(0, Stalls.NONE, 0, 0.5, 7);
        EmulatedPredictor<float[]> p = new EmulatedPredictor<>(10, 0, 10, () -> 1, jitter);
        EmulatedPredictor<float[]> same = new EmulatedPredictor<>(10, 0, 10, () -> 1, jitter);
        long[] times = new long[20_000];
        for (int i = 0; i < times.length; i++) {
            times[i] = p.batchNanos(batch(1));
            assertThat(same.batchNanos(batch(1))).isEqualTo(times[i]);
        }
        java.util.Arrays.sort(times);
        double mean = java.util.Arrays.stream(times).average().orElseThrow();
        assertThat(mean).isCloseTo(10_000_000, org.assertj.core.data.Percentage.withPercentage(3));
        // lognormal, sigma 0.5: the 99th percentile is e^(2.326*0.5 - 0.125) = 2.82 times the mean
        assertThat(times[(int) (0.99 * times.length)] / 1e7).isBetween(2.6, 3.05);
    }

    private static Pathologies transfer(double bytesPerMs) {
        return new Pathologies(bytesPerMs, Stalls.NONE, 0, 0, 1);
    }

    private static List<float[]> batch(int size) {
        return java.util.Collections.nCopies(size, new float[] {1f, 2f});
    }

    private static float[] oneHot(int length, int hot) {
        float[] v = new float[length];
        v[hot] = 1;
        return v;
    }
}

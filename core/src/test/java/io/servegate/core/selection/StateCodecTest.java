package io.servegate.core.selection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class StateCodecTest {

    private final Exp3Policy exp3 = new Exp3Policy();
    private final Exp4Policy exp4 = new Exp4Policy();

    @Test
    void weightedStatesRoundTrip() {
        for (long seed = 0; seed < 50; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            List<String> models = Exp3PolicyTest.models(r.nextInt(6));
            for (SelectionPolicy<WeightedState> p : List.of(exp3, exp4)) {
                WeightedState s = p.init(models);
                for (int i = 0; i < r.nextInt(50); i++) {
                    String m = models.isEmpty() ? "none" : models.get(r.nextInt(models.size()));
                    s = p.observe(s, null, "y", Map.of(m, r.nextBoolean() ? "y" : "n"));
                }
                WeightedState back = p.codec().decode(p.codec().encode(s));
                assertThat(back).isEqualTo(s);
                assertThat(back.logWeights()).containsExactly(s.logWeights());
                assertThat(back.observations()).isEqualTo(s.observations());
            }
        }
        // names outside ASCII survive
        WeightedState s = exp4.init(List.of("modèle-1", "模型"));
        assertThat(exp4.codec().decode(exp4.codec().encode(s)).models()).containsExactly("modèle-1", "模型");
    }

    @Test
    void singleModelStateRoundTrips() {
        SingleModelPolicy p = SingleModelPolicy.INSTANCE;
        List<String> s = p.init(List.of("b", "a"));
        assertThat(p.codec().decode(p.codec().encode(s))).containsExactly("b", "a");
        assertThat(p.codec().decode(p.codec().encode(List.of()))).isEmpty();
    }

    @Test
    void unknownSchemaVersionsAreRejected() {
        for (SelectionPolicy<?> p : List.of(exp3, exp4, SingleModelPolicy.INSTANCE)) {
            byte[] bytes = encodeInitial(p, List.of("a"));
            assertThat(bytes[0]).isEqualTo((byte) 1);
            bytes[0] = 2;
            assertThatThrownBy(() -> p.codec().decode(bytes))
                    .isInstanceOf(StateCodecException.class)
                    .hasMessageContaining("unsupported " + p.name() + " state schema version 2")
                    .hasMessageContaining("reads version 1");
        }
    }

    @Test
    void anotherPolicysStateIsRejected() {
        byte[] bytes = exp3.codec().encode(exp3.init(List.of("a")));
        assertThatThrownBy(() -> exp4.codec().decode(bytes))
                .isInstanceOf(StateCodecException.class)
                .hasMessageContaining("not exp4 state")
                .hasMessageContaining("policy tag '3'");
        assertThatThrownBy(() -> SingleModelPolicy.INSTANCE.codec().decode(bytes))
                .isInstanceOf(StateCodecException.class)
                .hasMessageContaining("not single state");
    }

    @Test
    void corruptBytesAreRejected() {
        byte[] good = exp4.codec().encode(exp4.observe(exp4.init(List.of("a", "b")), null, "y", Map.of("a", "n")));
        for (int len = 0; len < good.length; len++) {
            byte[] cut = Arrays.copyOf(good, len);
            assertThatThrownBy(() -> exp4.codec().decode(cut)).as("length %d", len)
                    .isInstanceOf(StateCodecException.class);
        }
        byte[] longer = Arrays.copyOf(good, good.length + 1);
        assertThatThrownBy(() -> exp4.codec().decode(longer)).hasMessageContaining("trailing bytes");
        assertThatThrownBy(() -> exp4.codec().decode(null)).hasMessageContaining("empty");
        // a NaN weight
        byte[] nan = good.clone();
        long bits = Double.doubleToLongBits(Double.NaN);
        for (int i = 0; i < 8; i++) {
            nan[good.length - 8 + i] = (byte) (bits >>> (56 - 8 * i));
        }
        assertThatThrownBy(() -> exp4.codec().decode(nan)).hasMessageContaining("weight NaN");
    }

    private static <S> byte[] encodeInitial(SelectionPolicy<S> p, List<String> models) {
        return p.codec().encode(p.init(models));
    }
}

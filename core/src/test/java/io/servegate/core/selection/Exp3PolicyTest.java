package io.servegate.core.selection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

class Exp3PolicyTest {

    private static final List<String> MODELS = List.of("a", "b", "c", "d");
    private final Exp3Policy policy = new Exp3Policy();

    @Test
    void startsUniform() {
        WeightedState s = policy.init(MODELS);
        assertThat(policy.probabilities(s)).containsExactly(0.25, 0.25, 0.25, 0.25);
        assertThat(s.observations()).isZero();
        assertThat(policy.select(policy.init(List.of()), null, new SplittableRandom(1))).isEmpty();
    }

    @Test
    void updateIsImportanceWeighted() {
        WeightedState s = policy.init(MODELS);
        // a was chosen with p = 1/4 and was wrong: s_a <- s_a * exp(-eta * 1 / (1/4))
        WeightedState t = policy.observe(s, null, "yes", Map.of("a", "no"));
        assertThat(t.weight("a")).isCloseTo(Math.exp(-0.1 * 4), within(1e-12));
        assertThat(t.weight("b")).isEqualTo(1.0);
        assertThat(t.observations()).isEqualTo(1);
        // a right answer costs nothing; an unknown model is ignored; the count still moves
        WeightedState u = policy.observe(t, null, "yes", Map.of("b", " yes ", "zz", "no"));
        assertThat(u.logWeights()).containsExactly(t.logWeights());
        assertThat(u.observations()).isEqualTo(2);
        // the state is immutable
        assertThat(s.weight("a")).isEqualTo(1.0);
    }

    @Test
    void selectFollowsTheProbabilities() {
        WeightedState s = policy.init(MODELS);
        for (int i = 0; i < 5; i++) {
            s = policy.observe(s, null, "y", Map.of("a", "n"));
        }
        double[] p = policy.probabilities(s);
        int[] counts = new int[4];
        RandomGenerator random = new SplittableRandom(42);
        int n = 200_000;
        for (int i = 0; i < n; i++) {
            List<String> chosen = policy.select(s, null, random);
            assertThat(chosen).hasSize(1);
            counts[MODELS.indexOf(chosen.get(0))]++;
        }
        for (int i = 0; i < 4; i++) {
            assertThat(counts[i] / (double) n).as(MODELS.get(i)).isCloseTo(p[i], within(0.005));
        }
        // deterministic given the generator
        assertThat(policy.select(s, null, new SplittableRandom(7)))
                .isEqualTo(policy.select(s, null, new SplittableRandom(7)));
    }

    @Test
    void probabilitiesSumToOneAndKeepTheFloorUnderRandomUpdates() {
        for (long seed = 0; seed < 200; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            int k = 1 + r.nextInt(8);
            double gamma = r.nextDouble(0.0, 0.5);
            Exp3Policy p = new Exp3Policy(r.nextDouble(0.01, 2.0), gamma, Task.CLASSIFICATION, 1);
            List<String> models = models(k);
            WeightedState s = p.init(models);
            for (int step = 0; step < 500; step++) {
                String m = p.select(s, null, r).get(0);
                s = p.observe(s, null, "y", Map.of(m, r.nextDouble() < 0.5 ? "y" : "n"));
                double[] prob = p.probabilities(s);
                assertThat(sum(prob)).as("seed %d step %d", seed, step).isCloseTo(1.0, within(1e-9));
                for (double x : prob) {
                    assertThat(x).isGreaterThanOrEqualTo(gamma / k - 1e-12);
                }
            }
        }
    }

    @Test
    void weightsStayFiniteAndPositiveUnderAMillionUpdates() {
        SplittableRandom r = new SplittableRandom(3);
        // gamma = 0 gives the largest importance weights (1/p up to K / 1e-6)
        for (Exp3Policy p : List.of(policy, new Exp3Policy(1.0, 0.0, Task.CLASSIFICATION, 1))) {
            WeightedState s = p.init(MODELS);
            for (int i = 0; i < 1_000_000; i++) {
                String m = MODELS.get(r.nextInt(4));
                // model d is always wrong, the others at random
                boolean right = !m.equals("d") && r.nextBoolean();
                s = p.observe(s, null, "y", Map.of(m, right ? "y" : "n"));
            }
            assertThat(s.observations()).isEqualTo(1_000_000);
            for (double w : s.weights()) {
                assertThat(w).isFinite().isPositive().isGreaterThanOrEqualTo(WeightedState.MIN_RELATIVE_WEIGHT);
            }
            assertThat(sum(p.probabilities(s))).isCloseTo(1.0, within(1e-9));
        }
    }

    @Test
    void anAlwaysWrongModelFallsBelowATenthOfUniform() {
        int k = MODELS.size();
        for (long seed = 0; seed < 10; seed++) {
            RandomGenerator r = new SplittableRandom(seed);
            double[] accuracy = {0.9, 0.8, 0.7, 0.0};
            WeightedState s = policy.init(MODELS);
            int wrongServed = 0;
            for (int round = 0; round < 20_000; round++) {
                String m = policy.select(s, null, r).get(0);
                boolean right = r.nextDouble() < accuracy[MODELS.indexOf(m)];
                if (round >= 10_000 && m.equals("d")) {
                    wrongServed++;
                }
                s = policy.observe(s, null, "7", Map.of(m, right ? "7" : "8"));
            }
            double pd = policy.probability(s, "d");
            assertThat(pd).as("seed %d", seed).isLessThan(1.0 / (10 * k));
            // it is never starved completely: the floor gamma/K remains
            assertThat(pd).isGreaterThanOrEqualTo(Exp3Policy.DEFAULT_GAMMA / k - 1e-12);
            assertThat(wrongServed / 10_000.0).isLessThan(1.0 / (10 * k));
            // the best model serves most of the traffic
            assertThat(policy.probability(s, "a")).isGreaterThan(0.5);
        }
    }

    @Test
    void combineReturnsTheSelectedModelsOutput() {
        WeightedState s = policy.init(MODELS);
        assertThat(policy.combine(s, null, Map.of("b", "x"), List.of("b")))
                .contains(new Combined("x", 1.0, 1, 1));
        assertThat(policy.combine(s, null, Map.of(), List.of("b"))).isEmpty();
        // outputs of models that were not selected are ignored
        assertThat(policy.combine(s, null, Map.of("c", "x"), List.of("b"))).isEmpty();
    }

    @Test
    void linkAddsNewModelsAtTheAverageWeight() {
        WeightedState s = policy.init(List.of("a", "b"));
        for (int i = 0; i < 3; i++) {
            s = policy.observe(s, null, "y", Map.of("b", "n"));
        }
        double wa = s.weight("a");
        double wb = s.weight("b");
        WeightedState t = policy.link(s, List.of("a", "b", "c"));
        assertThat(t.models()).containsExactly("a", "b", "c");
        assertThat(t.weight("c")).isCloseTo((wa + wb) / 2, within(1e-12));
        assertThat(t.weight("a")).isCloseTo(wa, within(1e-12));
        assertThat(t.observations()).isEqualTo(s.observations());
        assertThat(policy.link(t, List.of("a", "b", "c"))).isSameAs(t);
        assertThat(policy.link(t, List.of("c", "a")).models()).containsExactly("c", "a");
        assertThatThrownBy(() -> policy.link(t, List.of("a", "a"))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void rejectsBadParameters() {
        assertThatThrownBy(() -> new Exp3Policy(0, 0.05, Task.CLASSIFICATION, 1)).hasMessageContaining("eta");
        assertThatThrownBy(() -> new Exp3Policy(Double.NaN, 0.05, Task.CLASSIFICATION, 1)).hasMessageContaining("eta");
        assertThatThrownBy(() -> new Exp3Policy(0.1, 1.0, Task.CLASSIFICATION, 1)).hasMessageContaining("gamma");
        assertThatThrownBy(() -> new Exp3Policy(0.1, -0.1, Task.CLASSIFICATION, 1)).hasMessageContaining("gamma");
        assertThatThrownBy(() -> new Exp3Policy(0.1, 0.05, null, 1)).hasMessageContaining("task");
        assertThatThrownBy(() -> new Exp3Policy(0.1, 0.05, Task.REGRESSION, 0)).hasMessageContaining("scale");
        assertThatThrownBy(() -> policy.observe(policy.init(MODELS), null, null, Map.of()))
                .hasMessageContaining("label");
    }

    static List<String> models(int k) {
        return java.util.stream.IntStream.range(0, k).mapToObj(i -> "m" + i).toList();
    }

    static double sum(double[] xs) {
        double s = 0;
        for (double x : xs) {
            s += x;
        }
        return s;
    }

    @Test
    void feedbackOnAPredictionIsWeightedByTheProbabilityItWasDrawnWith() {
        WeightedState atPrediction = policy.init(MODELS);
        double drawn = policy.probability(atPrediction, "a");
        // other feedback arrives between the prediction and its own feedback
        WeightedState now = policy.observe(atPrediction, null, "y", Map.of("b", "n"));
        assertThat(policy.probability(now, "a")).isNotEqualTo(drawn);

        WeightedState joined = policy.observe(now, null, "y", Map.of("a", "n"), Map.of("a", drawn));
        double[] lw = now.logWeights();
        lw[0] -= 0.1 * 1 / drawn;
        assertThat(joined.logWeights()).containsExactly(WeightedState.normalize(lw));
        assertThat(joined.observations()).isEqualTo(2);
        // without the recorded probability, the current state's is used
        assertThat(policy.observe(now, null, "y", Map.of("a", "n"), Map.of()))
                .isEqualTo(policy.observe(now, null, "y", Map.of("a", "n")))
                .isNotEqualTo(joined);
        // the state-independent step is the same update
        assertThat(policy.step(null, "y", Map.of("a", "n"), Map.of("a", drawn)).applyTo(now)).isEqualTo(joined);
        assertThat(policy.step(null, "y", Map.of("a", "n"), Map.of("a", drawn)).decrements())
                .containsExactly(Map.entry("a", 0.1 / drawn));
    }

    @Test
    void aStepNeedsTheProbabilityOfEveryModelThatAnswered() {
        assertThatThrownBy(() -> policy.step(null, "y", Map.of("a", "n"), Map.of("b", 0.5)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'a'");
        assertThatThrownBy(() -> policy.step(null, "y", Map.of("a", "n"), Map.of("a", 0.0)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("(0, 1]");
        assertThatThrownBy(() -> policy.step(null, "y", Map.of("a", "n"), Map.of("a", Double.NaN)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> policy.step(null, null, Map.of("a", "n"), Map.of("a", 0.5)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}

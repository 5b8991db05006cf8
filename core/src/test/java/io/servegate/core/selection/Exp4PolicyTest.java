package io.servegate.core.selection;

import static io.servegate.core.selection.Exp3PolicyTest.models;
import static io.servegate.core.selection.Exp3PolicyTest.sum;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class Exp4PolicyTest {

    private static final List<String> ABC = List.of("a", "b", "c");
    private final Exp4Policy policy = new Exp4Policy();

    /** A state with the given relative weights. */
    private static WeightedState state(List<String> models, double... weights) {
        double[] lw = new double[weights.length];
        for (int i = 0; i < lw.length; i++) {
            lw[i] = Math.log(weights[i]);
        }
        return new WeightedState(models, WeightedState.normalize(lw), 0);
    }

    @Test
    void selectsAllModels() {
        assertThat(policy.select(policy.init(ABC), null, new SplittableRandom(0))).containsExactlyElementsOf(ABC);
    }

    @Test
    void weightedVoteAndConfidence() {
        WeightedState s = state(ABC, 1.0, 0.4, 0.3);
        // a alone outweighs b and c together
        Combined c = policy.combine(s, null, Map.of("a", "x", "b", "y", "c", "y"), ABC).orElseThrow();
        assertThat(c.output()).isEqualTo("x");
        assertThat(c.confidence()).isCloseTo(1.0 / 1.7, within(1e-12));
        assertThat(c.answered()).isEqualTo(3);
        assertThat(c.selected()).isEqualTo(3);
        // but not b, c and a third of its weight: weights, not head counts, decide
        WeightedState t = state(ABC, 1.0, 0.6, 0.5);
        assertThat(policy.combine(t, null, Map.of("a", "x", "b", "y", "c", "y"), ABC).orElseThrow().output())
                .isEqualTo("y");
        // unanimity is full confidence
        assertThat(policy.combine(s, null, Map.of("a", "x", "b", "x", "c", "x"), ABC).orElseThrow().confidence())
                .isCloseTo(1.0, within(1e-12));
    }

    @Test
    void numericLabelsPoolTheirVotes() {
        WeightedState s = state(ABC, 1.0, 0.8, 0.8);
        Combined c = policy.combine(s, null, Map.of("a", "4", "b", "3", "c", " 3.0 "), ABC).orElseThrow();
        assertThat(c.output()).isIn("3", "3.0");
        assertThat(c.confidence()).isCloseTo(1.6 / 2.6, within(1e-12));
    }

    @Test
    void combineWithStragglersVotesAmongThosePresentAndLowersConfidence() {
        WeightedState s = state(ABC, 1.0, 0.4, 0.3);
        Map<String, String> all = Map.of("a", "x", "b", "y", "c", "y");
        double full = policy.combine(s, null, all, ABC).orElseThrow().confidence();
        // a straggles: the vote of b and c decides, but confidence counts a as disagreeing
        Combined late = policy.combine(s, null, Map.of("b", "y", "c", "y"), ABC).orElseThrow();
        assertThat(late.output()).isEqualTo("y");
        assertThat(late.answered()).isEqualTo(2);
        assertThat(late.selected()).isEqualTo(3);
        assertThat(late.confidence()).isCloseTo(0.7 / 1.7, within(1e-12));
        // the same answers with everyone present are more confident
        Combined agreeing = policy.combine(s, null, Map.of("a", "y", "b", "y", "c", "y"), ABC).orElseThrow();
        assertThat(late.confidence()).isLessThan(agreeing.confidence());
        // every non-empty subset gives a result whose confidence is the weighted share of agreeing answers
        for (int mask = 1; mask < 8; mask++) {
            Map<String, String> present = new HashMap<>();
            for (int i = 0; i < 3; i++) {
                if ((mask & (1 << i)) != 0) {
                    present.put(ABC.get(i), all.get(ABC.get(i)));
                }
            }
            Combined c = policy.combine(s, null, present, ABC).orElseThrow();
            assertThat(c.answered()).isEqualTo(present.size());
            assertThat(c.confidence()).isLessThanOrEqualTo(full + 1e-12).isPositive();
            assertThat(present).containsValue(c.output());
        }
        assertThat(policy.combine(s, null, Map.of(), ABC)).isEmpty();
    }

    @Test
    void regressionTakesTheWeightedMeanOfNumericOutputs() {
        Exp4Policy reg = new Exp4Policy(0.1, Task.REGRESSION, 0.7, 10);
        WeightedState s = state(ABC, 1.0, 0.5, 0.5);
        Combined c = reg.combine(s, null, Map.of("a", "2", "b", "4", "c", "garbage"), ABC).orElseThrow();
        // c's output is not a number: it does not count, and it does not agree
        assertThat(Double.parseDouble(c.output())).isCloseTo((2 * 1.0 + 4 * 0.5) / 1.5, within(1e-12));
        assertThat(c.answered()).isEqualTo(2);
        // mean 2.667: a (within 0.7) agrees, b (1.33 away) does not
        assertThat(c.confidence()).isCloseTo(1.0 / 2.0, within(1e-12));
        // straggler b: mean over a and c
        Combined d = reg.combine(s, null, Map.of("a", "2", "c", "3"), ABC).orElseThrow();
        assertThat(Double.parseDouble(d.output())).isCloseTo((2 + 3 * 0.5) / 1.5, within(1e-12));
        assertThat(d.confidence()).isCloseTo(1.5 / 2.0, within(1e-12));
        assertThat(reg.combine(s, null, Map.of("a", "x"), ABC)).isEmpty();
        // regression losses scale with the error
        WeightedState t = reg.observe(reg.init(ABC), null, "2", Map.of("a", "2", "b", "7", "c", "100"));
        assertThat(t.weight("a")).isEqualTo(1.0);
        assertThat(t.weight("b")).isCloseTo(Math.exp(-0.1 * 0.5), within(1e-12));
        assertThat(t.weight("c")).isCloseTo(Math.exp(-0.1), within(1e-12));
        assertThatThrownBy(() -> reg.observe(t, null, "two", Map.of())).hasMessageContaining("not a decimal number");
    }

    @Test
    void observeAppliesEachModelsOwnLoss() {
        WeightedState s = policy.observe(policy.init(ABC), null, "x", Map.of("a", "x", "b", "z"));
        assertThat(s.weight("a")).isEqualTo(1.0);
        assertThat(s.weight("b")).isCloseTo(Math.exp(-0.1), within(1e-12));
        // c did not answer: no information, no change
        assertThat(s.weight("c")).isEqualTo(1.0);
        assertThat(s.observations()).isEqualTo(1);
    }

    @Test
    void downWeightsAFailingModelAndRecoversIt() {
        List<String> models = List.of("best", "good", "fair");
        double[] accuracy = {0.95, 0.8, 0.7};
        SplittableRandom r = new SplittableRandom(11);
        WeightedState s = policy.init(models);
        int[] phaseEnds = {3_000, 6_000, 10_000};
        int correctLate = 0;
        for (int round = 0; round < phaseEnds[2]; round++) {
            boolean failing = round >= phaseEnds[0] && round < phaseEnds[1];
            String label = Integer.toString(r.nextInt(10));
            Map<String, String> outputs = new HashMap<>();
            for (int i = 0; i < 3; i++) {
                double acc = i == 0 && failing ? 0.0 : accuracy[i];
                outputs.put(models.get(i), r.nextDouble() < acc ? label : wrong(label, r));
            }
            Combined c = policy.combine(s, null, outputs, models).orElseThrow();
            if (failing && round >= phaseEnds[1] - 1_000 && c.output().equals(label)) {
                correctLate++;
            }
            s = policy.observe(s, null, label, outputs);
            if (round == phaseEnds[0] - 1) {
                assertThat(s.weight("best")).as("best before failing").isEqualTo(1.0);
                assertThat(s.normalizedWeights()[0]).isGreaterThan(0.9);
            }
            if (round == phaseEnds[1] - 1) {
                assertThat(s.normalizedWeights()[0]).as("best while failing").isLessThan(0.01);
                assertThat(s.weight("good")).isEqualTo(1.0);
            }
        }
        // while "best" failed, the ensemble did about as well as the next-best model
        assertThat(correctLate / 1_000.0).isGreaterThan(0.75);
        assertThat(s.weight("best")).as("best after recovering").isEqualTo(1.0);
        assertThat(s.normalizedWeights()[0]).isGreaterThan(0.9);
        assertThat(s.observations()).isEqualTo(phaseEnds[2]);
    }

    private static String wrong(String label, SplittableRandom r) {
        int l = Integer.parseInt(label);
        return Integer.toString((l + 1 + r.nextInt(9)) % 10);
    }

    @Test
    void weightsSumToOneUnderRandomUpdates() {
        for (long seed = 0; seed < 200; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            int k = 1 + r.nextInt(8);
            Exp4Policy p = new Exp4Policy(r.nextDouble(0.01, 3.0), Task.CLASSIFICATION, 0, 1);
            List<String> models = models(k);
            WeightedState s = p.init(models);
            for (int step = 0; step < 500; step++) {
                Map<String, String> outputs = new HashMap<>();
                for (String m : models) {
                    if (r.nextDouble() < 0.9) {
                        outputs.put(m, Integer.toString(r.nextInt(3)));
                    }
                }
                s = p.observe(s, null, "1", outputs);
                assertThat(sum(s.normalizedWeights())).as("seed %d step %d", seed, step).isCloseTo(1.0, within(1e-9));
                Optional<Combined> c = p.combine(s, null, outputs, models);
                assertThat(c.isPresent()).isEqualTo(!outputs.isEmpty());
                c.ifPresent(x -> assertThat(x.confidence()).isBetween(0.0, 1.0));
            }
        }
    }

    @Test
    void weightsStayFiniteAndPositiveUnderAMillionUpdates() {
        SplittableRandom r = new SplittableRandom(9);
        Exp4Policy p = new Exp4Policy(2.0, Task.CLASSIFICATION, 0, 1);
        List<String> models = List.of("a", "b", "c", "d");
        WeightedState s = p.init(models);
        for (int i = 0; i < 1_000_000; i++) {
            Map<String, String> outputs = Map.of(
                    "a", r.nextDouble() < 0.9 ? "y" : "n",
                    "b", r.nextBoolean() ? "y" : "n",
                    "c", r.nextDouble() < 0.1 ? "y" : "n",
                    "d", "n");
            s = p.observe(s, null, "y", outputs);
        }
        assertThat(s.observations()).isEqualTo(1_000_000);
        for (double w : s.weights()) {
            assertThat(w).isFinite().isGreaterThanOrEqualTo(WeightedState.MIN_RELATIVE_WEIGHT).isLessThanOrEqualTo(1.0);
        }
        assertThat(s.weight("d")).isEqualTo(WeightedState.MIN_RELATIVE_WEIGHT, within(1e-18));
        assertThat(sum(s.normalizedWeights())).isCloseTo(1.0, within(1e-9));
    }

    @Test
    void linkPutsNewModelsAtTheAverageWeightAndDropsUnlinkedOnes() {
        WeightedState s = state(ABC, 1.0, 0.5, 0.3);
        WeightedState t = policy.link(s, List.of("b", "c", "d"));
        // a (the heaviest) is gone; d gets the mean of b and c; weights are renormalized
        assertThat(t.models()).containsExactly("b", "c", "d");
        assertThat(t.weight("b")).isCloseTo(1.0, within(1e-12));
        assertThat(t.weight("c")).isCloseTo(0.6, within(1e-12));
        assertThat(t.weight("d")).isCloseTo(0.8, within(1e-12));
        // nothing kept: everyone starts at 1
        assertThat(policy.link(s, List.of("x", "y")).weights()).containsExactly(1.0, 1.0);
        assertThat(policy.link(s, List.of()).models()).isEmpty();
        // a selected model the state does not know yet votes with the average weight
        Combined c = policy.combine(s, null, Map.of("a", "p", "new", "q"), List.of("a", "new")).orElseThrow();
        assertThat(c.output()).isEqualTo("p");
        assertThat(c.confidence()).isCloseTo(1.0 / (1.0 + 1.8 / 3), within(1e-12));
    }

    @Test
    void rejectsBadParameters() {
        assertThatThrownBy(() -> new Exp4Policy(-1, Task.CLASSIFICATION, 0, 1)).hasMessageContaining("eta");
        assertThatThrownBy(() -> new Exp4Policy(0.1, Task.REGRESSION, -1, 1)).hasMessageContaining("tolerance");
        assertThatThrownBy(() -> new Exp4Policy(0.1, Task.REGRESSION, 0, Double.POSITIVE_INFINITY))
                .hasMessageContaining("scale");
        assertThatThrownBy(() -> policy.combine(policy.init(ABC), null, null, ABC)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theStepIsTheUpdateAndIgnoresProbabilities() {
        Exp4Policy policy = new Exp4Policy();
        WeightedState s = policy.observe(policy.init(List.of("a", "b", "c")), null, "1", Map.of("a", "2"));
        Map<String, String> outputs = Map.of("a", "1", "b", "2", "zz", "2");
        WeightedStep step = policy.step(null, "1", outputs, Map.of("b", 0.25));
        assertThat(step.decrements()).containsOnly(Map.entry("a", 0.0), Map.entry("b", 0.1), Map.entry("zz", 0.1));
        assertThat(step.applyTo(s)).isEqualTo(policy.observe(s, null, "1", outputs))
                .isEqualTo(policy.observe(s, null, "1", outputs, Map.of("b", 0.25)));
    }
}

package io.servegate.sim.selection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import io.servegate.core.selection.Exp3Policy;
import io.servegate.core.selection.Exp4Policy;
import io.servegate.core.selection.SelectionPolicy;
import io.servegate.core.selection.SingleModelPolicy;
import io.servegate.sim.selection.SyntheticOutputs.Accuracy;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The selection engine on synthetic feedback: convergence, abandoning a failing model, contexts, determinism. */
class SelectionRunTest {

    private static final int CLASSES = 10;
    private static final List<SelectionPolicy<?>> POLICIES = List.of(new Exp3Policy(), new Exp4Policy());

    private static SelectionRun run(Map<String, Accuracy> models, int queries, int contexts, long seed) {
        return new SelectionRun(List.copyOf(models.keySet()), SyntheticOutputs.queries(queries, contexts, CLASSES, seed),
                new SyntheticOutputs(models, CLASSES, seed));
    }

    private static Map<String, Accuracy> models(Accuracy a, Accuracy b, Accuracy c) {
        Map<String, Accuracy> m = new LinkedHashMap<>();
        m.put("a", a);
        m.put("b", b);
        m.put("c", c);
        return m;
    }

    @Test
    void syntheticModelsAreRightAsOftenAsTheirAccuracy() {
        SelectionRun run = run(models(Accuracy.constant(0.9), Accuracy.constant(0.7), Accuracy.constant(0.5)),
                20_000, 1, 1);
        assertThat(run.staticModel("a").last()).isCloseTo(0.1, offset(0.01));
        assertThat(run.staticModel("b").last()).isCloseTo(0.3, offset(0.01));
        assertThat(run.staticModel("c").last()).isCloseTo(0.5, offset(0.01));
    }

    @Test
    void exp3AndExp4ConvergeToTheMostAccurateModel() {
        int n = 6_000;
        // The best model is last in link order, so the single-model default would pick the worst.
        SelectionRun run = run(models(Accuracy.constant(0.5), Accuracy.constant(0.7), Accuracy.constant(0.9)), n, 1, 7);
        double best = run.staticModel("c").window(n / 2, n);
        for (SelectionPolicy<?> policy : POLICIES) {
            ErrorCurve curve = run.run(policy.name(), policy, 7, false);
            // Exp3 still spends its γ = 5% of uniform exploration on the worse models.
            assertThat(curve.window(n / 2, n)).as(policy.name()).isLessThan(best + 0.03);
        }
        assertThat(run.run("single", SingleModelPolicy.INSTANCE, 7, false).last()).isGreaterThan(0.45);
    }

    @Test
    void aModelWhoseAccuracyDropsIsAbandonedAndTakenBackOnceItRecovers() {
        int n = 8_000;
        SelectionRun run = run(models(Accuracy.constant(0.9).except(2_000, 4_000, 0.1), Accuracy.constant(0.8),
                Accuracy.constant(0.6)), n, 1, 3);
        assertThat(run.staticModel("a").window(2_000, 4_000)).isGreaterThan(0.85);
        double second = run.staticModel("b").window(2_500, 4_000);
        for (SelectionPolicy<?> policy : POLICIES) {
            ErrorCurve curve = run.run(policy.name(), policy, 3, false);
            assertThat(curve.window(2_500, 4_000)).as("%s after the drop", policy.name()).isLessThan(second + 0.04);
            // Climbing back from the weight floor takes a few thousand queries (see Exp4Policy).
            assertThat(curve.window(7_000, n)).as("%s after the recovery", policy.name())
                    .isLessThan(run.staticModel("b").window(7_000, n));
        }
    }

    @Test
    void oneStatePerContextLearnsWhichModelIsGoodForWhom() {
        // a is good for context 0 only, b for context 1 only.
        Accuracy a = (q, context) -> context.equals("0") ? 0.9 : 0.1;
        Accuracy b = (q, context) -> context.equals("1") ? 0.9 : 0.1;
        SelectionRun run = run(models(a, b, Accuracy.constant(0.6)), 6_000, 2, 5);
        for (SelectionPolicy<?> policy : POLICIES) {
            double perContext = run.run(policy.name(), policy, 5, true).last();
            double shared = run.run(policy.name(), policy, 5, false).last();
            assertThat(perContext).as(policy.name()).isLessThan(0.2).isLessThan(shared - 0.1);
        }
    }

    @Test
    void aModelThatDoesNotAnswerIsAnError() {
        String[][] table = {{null, "1"}, {"2", "2"}};
        List<SelectionQuery> queries = List.of(new SelectionQuery(0, null, "1"), new SelectionQuery(1, null, "2"));
        SelectionRun run = new SelectionRun(List.of("x", "y"), queries, new RecordedOutputs(List.of("x", "y"), table));
        ErrorCurve curve = run.run("single", SingleModelPolicy.INSTANCE, 1, false);
        assertThat(curve.errors()).isEqualTo(1);
        assertThat(curve.at(0)).isEqualTo(1.0);
        assertThat(run.staticModel("y").errors()).isZero();
    }

    @Test
    void deterministicForASeed() {
        Map<String, Accuracy> m = models(Accuracy.constant(0.8), Accuracy.constant(0.7), Accuracy.constant(0.6));
        for (SelectionPolicy<?> policy : POLICIES) {
            ErrorCurve first = run(m, 3_000, 3, 11).run("1", policy, 11, true);
            ErrorCurve again = run(m, 3_000, 3, 11).run("2", policy, 11, true);
            assertThat(curve(again)).as(policy.name()).isEqualTo(curve(first));
        }
        // Exp4 draws nothing (it asks every model), so only Exp3's curve depends on the policy seed.
        ErrorCurve exp3 = run(m, 3_000, 3, 11).run("exp3", new Exp3Policy(), 11, true);
        ErrorCurve otherSeed = run(m, 3_000, 3, 11).run("exp3", new Exp3Policy(), 12, true);
        assertThat(curve(otherSeed)).isNotEqualTo(curve(exp3));
    }

    private static double[] curve(ErrorCurve c) {
        double[] at = new double[c.queries()];
        for (int q = 0; q < at.length; q++) {
            at[q] = c.at(q);
        }
        return at;
    }
}

package io.servegate.gateway.selection.fig8;

import static io.servegate.gateway.selection.fig8.SelectionReplay.ALL_MODELS;
import static io.servegate.gateway.selection.fig8.SelectionReplay.CNN;
import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.selection.Exp3Policy;
import io.servegate.core.selection.Exp4Policy;
import io.servegate.core.selection.SelectionPolicies;
import io.servegate.core.selection.SelectionPolicy;
import io.servegate.core.selection.WeightedState;
import io.servegate.gateway.selection.fig8.SelectionReplay.Corruption;
import io.servegate.sim.selection.ErrorCurve;
import io.servegate.sim.selection.SelectionRun;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A reduced-scale reproduction of Clipper's Figure 8 (NSDI'17 §5.2, "Behavior of Exp3 and Exp4
 * Under Model Failure") on the four real Fashion-MNIST ONNX models (test error about cnn 8%,
 * mlp 13%, logreg 17%, tiny 29%), replayed by {@link SelectionReplay} exactly as the gateway's
 * {@code SelectionService} runs the policies, with immediate feedback.
 *
 * <p>Paper: 20K queries, the best model degraded for queries 5K–10K, then recovered. Here:
 * {@value #QUERIES} queries, the best model (fmnist-cnn) answering uniformly random labels for
 * queries [{@value #FAIL_FROM}, {@value #FAIL_TO}), then recovering: the same shape at 2/5 of the
 * scale, with a recovery phase of 4,000 instead of 10,000 queries.
 *
 * <h2>Parameters</h2>
 * <ul>
 *   <li><b>Exp4: the defaults</b> ({@code η = 0.1}).</li>
 *   <li><b>Exp3: {@code η = 0.2}</b>, {@code γ} at its default 0.05, i.e. selection_params
 *       {@code {"eta": 0.2}}. At the default {@code η = 0.1} Exp3 does <em>not</em> reliably beat
 *       every static model at this scale (the row "exp3 default" is printed for comparison, not
 *       asserted). Why: during the failure the cnn's weight falls to the
 *       {@link WeightedState#MIN_RELATIVE_WEIGHT} floor ({@code 10^-6}); after it recovers it
 *       has to climb {@code ln(10^6) ≈ 13.8} in log-weight, at an expected net rate of
 *       {@code η · Δ} per query, {@code Δ ≈ 0.126 − 0.082 = 0.044} being how much less often it
 *       is wrong than the mlp. That is about 3,100 queries at {@code η = 0.1}: nearly 80% of the
 *       4,000-query recovery phase, against about 30% of the paper's 10,000. On top of that,
 *       Exp3's importance-weighted update knocks a rarely chosen model back down by
 *       {@code η / p ≈ 8} log-units for a single wrong answer, so its climb is very noisy.
 *       Scaling the horizon down by 2.5 therefore calls for a faster learning rate; doubling it
 *       halves the climb (about 1,600 queries, 40% of the phase, close to the paper's ratio).
 *       Replaying the scenario/policy seed pairs (s, s), s = 1..150, with feedback joined to the
 *       prediction it is about (the gateway's behaviour): with the default η Exp3 beat every
 *       static model in 115/150, with {@code η = 0.2} in 149/150 (mean final error 0.115 against
 *       0.126 for the best static model, the mlp). Exp4 with its defaults did in 149/150 (mean
 *       0.122; its own climb back takes the same ~3,100 queries, so its margin is thinner than
 *       Exp3's at 0.2). The seeds below are the first pair of that sweep.
 *       </li>
 * </ul>
 * The scenario and policy seeds are fixed, so the test is deterministic.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class Fig8ReproductionTest {

    static final int QUERIES = 8_000;
    static final int FAIL_FROM = 2_000;
    static final int FAIL_TO = 4_000;
    private static final long SCENARIO_SEED = 1;
    private static final long POLICY_SEED = 1;
    /** Exp3's learning rate for this scale; see the class comment. */
    static final double EXP3_ETA = 0.2;

    private List<ErrorCurve> statics;
    private ErrorCurve exp3;
    private ErrorCurve exp4;

    @BeforeAll
    void replay() {
        long start = System.nanoTime();
        SelectionRun scenario = SelectionReplay.scenario(ALL_MODELS, QUERIES, 1, SCENARIO_SEED,
                List.of(Corruption.window(CNN, FAIL_FROM, FAIL_TO)));
        statics = scenario.staticModels();
        // as an application would configure them
        SelectionPolicy<?> exp3Policy = SelectionPolicies.create(Exp3Policy.NAME, Map.of("eta", EXP3_ETA));
        SelectionPolicy<?> exp4Policy = SelectionPolicies.create(Exp4Policy.NAME, Map.of());
        exp3 = scenario.run("exp3 (eta=" + EXP3_ETA + ")", exp3Policy, POLICY_SEED, false);
        exp4 = scenario.run("exp4 (default)", exp4Policy, POLICY_SEED, false);
        ErrorCurve exp3Default = scenario.run("exp3 default [info]", new Exp3Policy(), POLICY_SEED, false);

        List<ErrorCurve> all = new ArrayList<>(statics);
        all.add(exp3);
        all.add(exp4);
        all.add(exp3Default);
        System.out.print(ErrorCurve.table(String.format(
                "Figure 8 replay: %d queries, %s random for [%d, %d); error rate (cumulative, per window); %.1f s",
                QUERIES, CNN, FAIL_FROM, FAIL_TO, (System.nanoTime() - start) / 1e9),
                all, 0, FAIL_FROM, FAIL_TO, 6_000, QUERIES));
    }

    @Test
    void beforeTheFailureExp4IsAsGoodAsTheBestModel() {
        int last = FAIL_FROM - 1;
        double best = statics.stream().mapToDouble(c -> c.at(last)).min().orElseThrow();
        assertThat(exp4.at(last)).as("exp4's cumulative error over queries 0..%d", last)
                .isLessThanOrEqualTo(best + 0.01);
    }

    @Test
    void inTheEndBothPoliciesBeatEveryStaticModel() {
        for (ErrorCurve model : statics) {
            assertThat(exp3.last()).as("exp3 vs static %s", model.name()).isLessThan(model.last());
            assertThat(exp4.last()).as("exp4 vs static %s", model.name()).isLessThan(model.last());
        }
    }

    @Test
    void duringTheFailureBothPoliciesDivertFromTheFailingModel() {
        ErrorCurve failing = statics.get(ALL_MODELS.indexOf(CNN));
        double failingRate = failing.window(FAIL_FROM, FAIL_TO);
        assertThat(failingRate).as("the corrupted model is mostly wrong").isGreaterThan(0.8);
        assertThat(exp3.window(FAIL_FROM, FAIL_TO)).isLessThan(failingRate / 3);
        assertThat(exp4.window(FAIL_FROM, FAIL_TO)).isLessThan(failingRate / 3);
    }
}

package io.servegate.core.selection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SelectionPoliciesTest {

    @Test
    void createsEachPolicyWithDefaults() {
        assertThat(SelectionPolicies.create(null, null)).isSameAs(SingleModelPolicy.INSTANCE);
        assertThat(SelectionPolicies.create(" ", Map.of())).isSameAs(SingleModelPolicy.INSTANCE);
        assertThat(SelectionPolicies.create("single", Map.of()).name()).isEqualTo("single");
        Exp3Policy exp3 = (Exp3Policy) SelectionPolicies.create("exp3", Map.of());
        assertThat(exp3.eta()).isEqualTo(0.1);
        assertThat(exp3.gamma()).isEqualTo(0.05);
        assertThat(exp3.task()).isEqualTo(Task.CLASSIFICATION);
        Exp4Policy exp4 = (Exp4Policy) SelectionPolicies.create(" EXP4 ", null);
        assertThat(exp4.eta()).isEqualTo(0.1);
        assertThat(exp4.task()).isEqualTo(Task.CLASSIFICATION);
    }

    @Test
    void passesParameters() {
        Exp3Policy exp3 = (Exp3Policy) SelectionPolicies.create("exp3",
                Map.of("eta", 0.5, "gamma", "0.02", "task", "Regression", "scale", 3));
        assertThat(exp3.eta()).isEqualTo(0.5);
        assertThat(exp3.gamma()).isEqualTo(0.02);
        assertThat(exp3.task()).isEqualTo(Task.REGRESSION);
        assertThat(exp3.scale()).isEqualTo(3.0);
        Exp4Policy exp4 = (Exp4Policy) SelectionPolicies.create("exp4",
                Map.of("eta", "0.2", "task", Task.REGRESSION, "tolerance", 0.25, "scale", 2.0));
        assertThat(exp4.eta()).isEqualTo(0.2);
        assertThat(exp4.task()).isEqualTo(Task.REGRESSION);
        assertThat(exp4.tolerance()).isEqualTo(0.25);
        assertThat(exp4.scale()).isEqualTo(2.0);
    }

    @Test
    void rejectsUnknownNamesAndParameters() {
        assertThatThrownBy(() -> SelectionPolicies.create("ucb", Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown selection policy 'ucb'")
                .hasMessageContaining("accepted: single, exp3, exp4");
        assertThatThrownBy(() -> SelectionPolicies.create("exp3", Map.of("tolerance", 1)))
                .hasMessageContaining("unknown parameter 'tolerance' for selection policy 'exp3'")
                .hasMessageContaining("accepted: eta, gamma, scale, task");
        assertThatThrownBy(() -> SelectionPolicies.create("exp4", Map.of("gamma", 1)))
                .hasMessageContaining("accepted: eta, scale, task, tolerance");
        assertThatThrownBy(() -> SelectionPolicies.create("single", Map.of("eta", 1)))
                .hasMessageContaining("takes no parameters");
        assertThatThrownBy(() -> SelectionPolicies.create("exp4", Map.of("eta", "fast")))
                .hasMessageContaining("parameter 'eta' of selection policy 'exp4' must be a number, got 'fast'");
        assertThatThrownBy(() -> SelectionPolicies.create("exp4", Map.of("task", "ranking")))
                .hasMessageContaining("unknown task 'ranking'; accepted: classification, regression");
        assertThatThrownBy(() -> SelectionPolicies.create("exp3", Map.of("gamma", 2)))
                .hasMessageContaining("gamma must be in [0, 1)");
    }

    @Test
    void singleModelPolicyAlwaysPicksTheFirstModel() {
        SingleModelPolicy p = SingleModelPolicy.INSTANCE;
        List<String> s = p.init(List.of("m2", "m1"));
        SplittableRandom r = new SplittableRandom(0);
        for (int i = 0; i < 100; i++) {
            assertThat(p.select(s, null, r)).containsExactly("m2");
        }
        assertThat(p.observe(s, null, "y", Map.of("m2", "n"))).isSameAs(s);
        assertThat(p.combine(s, null, Map.of("m2", "out"), List.of("m2"))).contains(new Combined("out", 1.0, 1, 1));
        assertThat(p.combine(s, null, Map.of(), List.of("m2"))).isEmpty();
        assertThat(p.select(p.init(List.of()), null, r)).isEmpty();
        assertThat(p.link(s, List.of("m2", "m1"))).isSameAs(s);
        assertThat(p.link(s, List.of("m3", "m2"))).containsExactly("m3", "m2");
    }
}

package io.servegate.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import io.servegate.loadgen.scenario.ShadowCostPlan.Candidate;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ShadowCostCommandTest {

    @Test
    void copiesAreCountedPerOutcomeForTheBenchmarksModelBetweenTwoScrapes() {
        String before = """
                servegate_rollout_shadow_total{candidate="2",model="shadow",outcome="sent"} 10.0
                servegate_rollout_shadow_total{candidate="2",model="other",outcome="sent"} 99.0
                """;
        String after = """
                servegate_rollout_shadow_total{candidate="2",model="shadow",outcome="sent"} 25.0
                servegate_rollout_shadow_total{candidate="4",model="shadow",outcome="sent"} 3.0
                servegate_rollout_shadow_total{candidate="4",model="shadow",outcome="dropped_busy"} 7.0
                servegate_rollout_shadow_total{candidate="2",model="other",outcome="sent"} 500.0
                """;
        assertThat(ShadowCostCommand.shadowCopies(after, before)).containsExactly(entry("sent", 18L),
                entry("dropped_busy", 7L), entry("dropped_in_flight", 0L));
    }

    @Test
    void eachCandidateHasAVersionOfItsOwnAndTheDefaultsMeasureTheIssuesCase() {
        assertThat(ShadowCostCommand.version(Candidate.EQUAL)).isEqualTo("2");
        assertThat(ShadowCostCommand.version(Candidate.SLOW)).isEqualTo("3");
        assertThat(ShadowCostCommand.version(Candidate.STUCK)).isEqualTo("4");
        ShadowCostCommand c = (ShadowCostCommand) new CommandLine(new LoadGen()).parseArgs("shadow-cost").subcommand()
                .commandSpec().userObject();
        assertThat(c.loadFactor).isEqualTo(0.8);
        assertThat(c.slo.ms()).isEqualTo(50);
        assertThat(c.rate.given()).isFalse();
        assertThat(c.variantTexts).containsExactly("equal:1", "stuck:1");
    }
}

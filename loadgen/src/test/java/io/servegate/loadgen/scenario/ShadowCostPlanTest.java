package io.servegate.loadgen.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.servegate.loadgen.scenario.ShadowCostPlan.Candidate;
import io.servegate.loadgen.scenario.ShadowCostPlan.Comparison;
import io.servegate.loadgen.scenario.ShadowCostPlan.Leg;
import io.servegate.loadgen.scenario.ShadowCostPlan.Outcome;
import io.servegate.loadgen.scenario.ShadowCostPlan.Variant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ShadowCostPlanTest {

    @Test
    void variantsParseWithAFractionOfOneByDefault() {
        assertThat(Variant.parse("equal")).isEqualTo(new Variant(Candidate.EQUAL, 1));
        assertThat(Variant.parse(" Stuck:0.1 ")).isEqualTo(new Variant(Candidate.STUCK, 0.1));
        assertThat(Variant.parse("slow:1.0").label()).isEqualTo("slow:1");
        assertThat(Variant.parse("equal:0.10").label()).isEqualTo("equal:0.1");
        assertThatThrownBy(() -> Variant.parse("fast")).hasMessageContaining("equal, slow or stuck");
        assertThatThrownBy(() -> Variant.parse("equal:0")).hasMessageContaining("(0, 1]");
        assertThatThrownBy(() -> Variant.parse("equal:1.5")).hasMessageContaining("(0, 1]");
        assertThatThrownBy(() -> Variant.parse("equal:x")).hasMessageContaining("a number");
        assertThatThrownBy(() -> Variant.parse("equal:1:2")).hasMessageContaining("KIND[:FRACTION]");
    }

    @Test
    void legsPairEachVariantWithALegWithoutAndSwapTheOrderEveryOtherRound() {
        Variant equal = new Variant(Candidate.EQUAL, 1);
        Variant stuck = new Variant(Candidate.STUCK, 1);
        List<Leg> legs = ShadowCostPlan.legs(List.of(equal, stuck), 2);
        assertThat(legs).containsExactly(
                new Leg(1, 0, null), new Leg(1, 0, equal), new Leg(1, 1, null), new Leg(1, 1, stuck),
                new Leg(2, 0, equal), new Leg(2, 0, null), new Leg(2, 1, stuck), new Leg(2, 1, null));
        assertThat(legs.get(0).label()).isEqualTo("off");
        assertThat(legs.get(1).label()).isEqualTo("equal:1");
        assertThatThrownBy(() -> ShadowCostPlan.legs(List.of(), 2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ShadowCostPlan.legs(List.of(equal), 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aVariantIsComparedWithItsOwnPairedLegsOnly() {
        Variant equal = new Variant(Candidate.EQUAL, 1);
        Variant stuck = new Variant(Candidate.STUCK, 0.5);
        List<Outcome> outcomes = new ArrayList<>();
        // round 1: off 990/1000, equal 980/1000; off 1000/1000, stuck 500/1000
        outcomes.add(new Outcome(new Leg(1, 0, null), 1000, 990));
        outcomes.add(new Outcome(new Leg(1, 0, equal), 1000, 980));
        outcomes.add(new Outcome(new Leg(1, 1, null), 1000, 1000));
        outcomes.add(new Outcome(new Leg(1, 1, stuck), 1000, 500));
        // round 2 (B A): equal 1000/1000, off 1000/1000; stuck 900/1000, off 900/1000
        outcomes.add(new Outcome(new Leg(2, 0, equal), 1000, 1000));
        outcomes.add(new Outcome(new Leg(2, 0, null), 1000, 1000));
        outcomes.add(new Outcome(new Leg(2, 1, stuck), 1000, 900));
        outcomes.add(new Outcome(new Leg(2, 1, null), 1000, 900));

        List<Comparison> c = ShadowCostPlan.compare(outcomes);
        assertThat(c).extracting(Comparison::variant).containsExactly(equal, stuck);
        assertThat(c.get(0).without()).isCloseTo(0.995, within(1e-12));
        assertThat(c.get(0).with()).isCloseTo(0.990, within(1e-12));
        assertThat(c.get(0).ratio()).isCloseTo(0.990 / 0.995, within(1e-12));
        assertThat(c.get(0).pairRatios()).containsExactly(980.0 / 990, 1.0);
        assertThat(c.get(1).ratio()).isCloseTo(0.70 / 0.95, within(1e-12));
        assertThat(c.get(1).pairRatios()).containsExactly(0.5, 1.0);
    }

    @Test
    void aPairWithoutGoodputOnOneSideHasNoRoundRatio() {
        Variant equal = new Variant(Candidate.EQUAL, 1);
        List<Comparison> c = ShadowCostPlan.compare(List.of(new Outcome(new Leg(1, 0, null), 1000, 0),
                new Outcome(new Leg(1, 0, equal), 1000, 10)));
        assertThat(c.get(0).pairRatios()).isEmpty();
        assertThat(c.get(0).ratio()).isNaN();
        assertThat(new Outcome(new Leg(1, 0, null), 0, 0).goodput()).isZero();
    }
}

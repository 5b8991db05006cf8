package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.cli.ScenarioBuilder;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Apps sharing one model version ({@code bin/sim tenants}), with the settings of the figures in
 * docs/scheduling.md: one replica of 10 + 1·b ms, SLO 50 ms, 0.5 ms transport, capacity 600/s,
 * Poisson, 30 s, seed 1, default policy.
 */
class TenantsTest {

    private static final double CAPACITY = 600;

    private static ScenarioBuilder builder() {
        return new ScenarioBuilder().policy(PolicyKind.ADAPTIVE).linear(10, 1, 0).sloMs(50).overheadMs(0.5)
                .durationS(30).seed(1);
    }

    private static List<TenantMix.AppResult> mix(String... apps) {
        List<TenantMix.App> parsed = Arrays.stream(apps).map(TenantMix.App::parse).toList();
        double load = parsed.stream().mapToDouble(TenantMix.App::load).sum();
        return TenantMix.run(builder().rate(load * CAPACITY).build(), parsed);
    }

    private static TenantMix.AppResult alone(TenantMix.App app) {
        return TenantMix.run(builder().rate(app.load() * CAPACITY).build(), List.of(app)).get(0);
    }

    @Test
    void atTwiceCapacityTheCriticalAppIsServedAndTheSheddableOneIsNeverLate() {
        List<TenantMix.AppResult> r = mix("c:critical@0.5", "s:sheddable@1.5");
        assertThat(r.get(0).inSlo()).as("critical in SLO").isGreaterThanOrEqualTo(0.99);
        TenantMix.AppResult shed = r.get(1);
        assertThat(shed.answeredLate()).as("sheddable answered late").isZero();
        assertThat(shed.defaultLate()).as("sheddable defaults at the deadline").isZero();
        // what is left of 600/s after the critical app's 300/s, less than it all
        assertThat(shed.good() / 30.0).as("sheddable goodput/s").isBetween(240.0, 310.0);
    }

    @Test
    void equalTiersWithWeightsOneToThreeShareTheModelTimeOneToThree() {
        List<TenantMix.AppResult> r = mix("a:standard:1@1", "b:standard:3@1");
        double share = (double) r.get(0).modelNanos() / (r.get(0).modelNanos() + r.get(1).modelNanos());
        assertThat(share).isBetween(0.25 * 0.9, 0.25 * 1.1);
    }

    @Test
    void acrossModelsOnSharedReplicasTheCriticalAppsModelKeepsTheReplica() {
        // bin/sim tenants --across-models: each app on a model of its own, both on one multi-model replica
        // (5 + 0.5 b ms, SLO 100 ms, 0.5 ms transport; it serves about 1,500/s of one model)
        ManyModelScenario scenario = new ManyModelScenario(ModelPlacement.STATIC, 2, 0, 1, 2, 100, 100, 1, 5, 0.5,
                0.5, 100, 2 * 1_500, 10, 1);
        List<TenantMix.AppResult> tiers = TenantMix.runAcrossModels(scenario,
                List.of(TenantMix.App.parse("c:critical@0.5"), TenantMix.App.parse("s:sheddable@1.5")));
        assertThat(tiers.get(0).inSlo()).as("critical in SLO").isGreaterThanOrEqualTo(0.99);
        assertThat(tiers.get(1).answeredLate()).as("sheddable answered late").isZero();
        List<TenantMix.AppResult> equal = TenantMix.runAcrossModels(scenario,
                List.of(TenantMix.App.parse("c:standard@0.5"), TenantMix.App.parse("s:standard@1.5")));
        assertThat(equal.get(0).inSlo()).as("the same app as standard").isLessThan(0.5);
    }

    @Test
    void belowCapacityEachAppGetsWhatItGetsAlone() {
        for (TenantMix.AppResult r : mix("a:critical@0.35", "b:sheddable@0.35")) {
            assertThat(r.inSlo() / alone(r.app()).inSlo()).as(r.app().tenant().app()).isGreaterThanOrEqualTo(0.99);
        }
    }
}

package io.servegate.loadgen.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.servegate.loadgen.harness.AppMetrics;
import io.servegate.loadgen.harness.PrometheusText;
import io.servegate.sim.TenantMix;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The tenants benchmark's per-app gateway counts, model time shares and criteria checks. */
class TenantsReportTest {

    private static String scrape(long answers, long shed, double modelSeconds) {
        return """
                servegate_request_latency_seconds_count{app="s",default="false"} %d
                servegate_request_latency_seconds_count{app="s",default="true"} %d
                servegate_request_latency_seconds_count{app="c",default="false"} 1000
                servegate_answers_late_total{app="s"} 0
                servegate_answers_late_total{app="c"} 7
                servegate_defaults_total{app="s",reason="shed"} %d
                servegate_defaults_total{app="s",reason="deadline"} 2
                servegate_shed_total{app="s",priority="sheddable"} %d
                servegate_model_time_seconds_total{app="s",model="m",version="1"} %s
                servegate_model_time_seconds_total{app="c",model="m",version="1"} 3.0
                """.formatted(answers, shed + 2, shed, shed, modelSeconds);
    }

    @Test
    void anAppsGatewayCountsOverAWindowAreTheDifferenceOfTwoScrapesOfItsOwnSeries() {
        AppMetrics before = AppMetrics.of(PrometheusText.parse(scrape(100, 10, 1.0)), "s");
        AppMetrics after = AppMetrics.of(PrometheusText.parse(scrape(400, 50, 2.5)), "s");
        AppMetrics window = after.minus(before);
        assertThat(window.answers()).isEqualTo(300 + 40);
        assertThat(window.shed()).isEqualTo(40);
        assertThat(window.defaults()).containsExactly(Map.entry("shed", 40L)); // deadline did not move
        assertThat(window.modelSeconds()).isCloseTo(1.5, within(1e-9));
        assertThat(AppMetrics.of(PrometheusText.parse(scrape(1, 1, 1)), "c").late()).isEqualTo(7);
        // a gateway without the model time series: unknown, not zero
        assertThat(AppMetrics.of(PrometheusText.parse("servegate_answers_late_total{app=\"s\"} 1\n"), "s")
                .modelSeconds()).isNull();
    }

    private static TenantsReport.AppRun run(String spec, long sent, long goodput, long clientLate, long gatewayLate,
            Double modelSeconds) {
        return new TenantsReport.AppRun(TenantMix.App.parse(spec), 10, sent, goodput, goodput, clientLate, Map.of(), 0,
                new AppMetrics(sent, gatewayLate, Map.of(), 0, modelSeconds));
    }

    private static Map<String, Boolean> verdicts(List<Map<String, Object>> checks) {
        return checks.stream().collect(java.util.stream.Collectors.toMap(c -> (String) c.get("criterion"),
                c -> (Boolean) c.get("holds")));
    }

    @Test
    void overCapacityTheCriticalAppIsHeldTo95PercentAndTheSheddableOneToNoLateAnswer() {
        List<TenantsReport.AppRun> mix = List.of(run("c:critical@0.5", 3000, 2880, 0, 0, 5.0),
                run("s:sheddable@1.5", 9000, 2500, 0, 1, 5.0));
        Map<String, Boolean> v = verdicts(TenantsReport.checks(mix, Map.of()));
        assertThat(v).containsEntry("c (critical) in SLO ≥ 95 %", true)
                .containsEntry("s (sheddable) late answers, client + gateway = 0", false).hasSize(2);
        // below capacity the critical app's figure is judged against its alone run, not 95 %
        List<TenantsReport.AppRun> light = List.of(run("c:critical@0.35", 2100, 1900, 0, 0, 1.0));
        assertThat(verdicts(TenantsReport.checks(light, Map.of()))).isEmpty();
    }

    @Test
    void weightsOneToThreeHoldWithinTenPercentOfAQuarterOfTheModelTime() {
        List<TenantsReport.AppRun> near = List.of(run("a:standard:1@1", 6000, 1400, 0, 0, 2.4),
                run("b:standard:3@1", 6000, 4100, 0, 0, 7.6));
        assertThat(TenantsReport.modelShare(near, near.get(0))).isCloseTo(0.24, within(1e-9));
        assertThat(verdicts(TenantsReport.checks(near, Map.of()))).containsValues(true).doesNotContainValue(false)
                .hasSize(2);
        List<TenantsReport.AppRun> off = List.of(run("a:standard:1@1", 6000, 1400, 0, 0, 3.0),
                run("b:standard:3@1", 6000, 4100, 0, 0, 7.0));
        assertThat(verdicts(TenantsReport.checks(off, Map.of()))).containsEntry(
                "a model time share within 10 % of 0.250", false);
        // without the gateway's model time, no share and no check
        List<TenantsReport.AppRun> unknown = List.of(run("a:standard:1@1", 6000, 1400, 0, 0, null),
                run("b:standard:3@1", 6000, 4100, 0, 0, 7.0));
        assertThat(TenantsReport.modelShare(unknown, unknown.get(1))).isNull();
        assertThat(TenantsReport.checks(unknown, Map.of())).isEmpty();
    }

    @Test
    void belowCapacityEachAppIsHeldTo99PercentOfItsGoodputAlone() {
        List<TenantsReport.AppRun> mix = List.of(run("c:critical@0.35", 2100, 2100, 0, 0, 1.0),
                run("s:sheddable@0.35", 2100, 2070, 0, 0, 1.0));
        Map<String, TenantsReport.AppRun> alone = Map.of("c", run("c:critical@0.35", 2100, 2100, 0, 0, 1.0),
                "s", run("s:sheddable@0.35", 2100, 2100, 0, 0, 1.0));
        Map<String, Boolean> v = verdicts(TenantsReport.checks(mix, alone));
        assertThat(v).containsEntry("c goodput ≥ 99 % of alone", true)
                .containsEntry("s goodput ≥ 99 % of alone", false) // 2070 / 2100 = 98.6 %
                .containsEntry("s (sheddable) late answers, client + gateway = 0", true);
    }
}

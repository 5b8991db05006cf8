package io.servegate.loadgen.harness;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.loadgen.report.CpuPerQueryReport;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A process's CPU seconds read from /proc move with work; readings subtract; ratios come out per rate. */
class ProcessCostTest {

    @Test
    void cpuSecondsOfThisProcessGrowWithWork() {
        long pid = ProcessHandle.current().pid();
        double before = ProcessCost.cpuSeconds(pid);
        assertThat(before).isPositive();
        long x = 0;
        long until = System.nanoTime() + 300_000_000L;
        while (System.nanoTime() < until) {
            x += Long.numberOfTrailingZeros(x + System.nanoTime());
        }
        assertThat(x).isNotNegative();
        assertThat(ProcessCost.cpuSeconds(pid)).isGreaterThan(before);
        assertThat(ProcessCost.cpuSeconds(Long.MAX_VALUE)).isNaN();
    }

    @Test
    void aReadingMinusAnEarlierOneIsWhatWasSpentAndUnknownAllocationStaysUnknown() {
        ProcessCost.Reading spent = new ProcessCost.Reading(3.5, 1000).minus(new ProcessCost.Reading(1.0, 400));
        assertThat(spent.cpuS()).isEqualTo(2.5);
        assertThat(spent.allocatedBytes()).isEqualTo(600);
        assertThat(new ProcessCost.Reading(3, -1).minus(new ProcessCost.Reading(1, 5)).allocatedBytes()).isEqualTo(-1);
    }

    @Test
    void ratiosAreMediansOverRoundsPerRate() {
        List<CpuPerQueryReport.Leg> legs = List.of(leg("floor", 0, 100, 50), leg("gateway", 0, 100, 200),
                leg("floor", 1, 100, 40), leg("gateway", 1, 100, 100), leg("floor", 0, 200, 30),
                leg("gateway", 0, 200, 60));
        List<java.util.Map<String, Object>> ratios = CpuPerQueryReport.ratios(legs);
        assertThat(ratios).hasSize(2);
        assertThat((Double) ratios.get(0).get("gatewayOverFloor")).isEqualTo(150.0 / 45.0);
        assertThat((Double) ratios.get(1).get("gatewayOverFloor")).isEqualTo(2.0);
        assertThat(ratios.get(0).get("gatewayOverBaseline")).isNull();
    }

    private static CpuPerQueryReport.Leg leg(String server, int round, double rate, double cpuUs) {
        return new CpuPerQueryReport.Leg(server, round, rate, rate, 100, 0, 1.0, cpuUs * 1e-4, cpuUs, 1000, null, "1");
    }
}

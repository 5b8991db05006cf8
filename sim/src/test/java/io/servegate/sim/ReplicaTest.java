package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.scheduling.RejectReason;
import io.servegate.sim.cli.ScenarioBuilder;
import io.servegate.sim.latency.EmpiricalLatency;
import io.servegate.sim.latency.LinearLatency;
import io.servegate.sim.latency.ServiceProfile;
import io.servegate.sim.report.Summary;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Latency models, measured profiles, concurrency and failures. */
class ReplicaTest {

    @TempDir
    Path dir;

    /** Every query leaves exactly once: in time, late, failed or with a default. */
    private static void conserved(ModelStats s) {
        assertThat(s.good() + s.late() + s.failed() + Summary.totalDefaults(s)).isEqualTo(s.arrived());
    }

    @Test
    void lognormalNoiseKeepsTheMean() {
        LinearLatency l = new LinearLatency(5_000_000, 500_000, 0.5);
        SplittableRandom random = new SplittableRandom(1);
        double sum = 0;
        for (int i = 0; i < 100_000; i++) {
            sum += l.serviceNanos(10, random);
        }
        assertThat(sum / 100_000).isCloseTo(10_000_000, Percentage.withPercentage(1));
    }

    @Test
    void measuredProfileRoundTripsAndInterpolates() throws IOException {
        ServiceProfile p = new ServiceProfile(Map.of(1, new long[] {5_000, 5_000}, 4, new long[] {8_000}, 8,
                new long[] {12_000}));
        StringWriter w = new StringWriter();
        p.write(w, List.of("container emulated"));
        Path f = dir.resolve("profile.csv");
        Files.writeString(f, w.toString());
        ServiceProfile read = ServiceProfile.read(f);
        assertThat(read.samples().keySet()).containsExactly(1, 4, 8);
        EmpiricalLatency e = new EmpiricalLatency(read);
        SplittableRandom random = new SplittableRandom(1);
        assertThat(e.serviceNanos(1, random)).isEqualTo(5_000);
        assertThat(e.serviceNanos(2, random)).isEqualTo(6_000); // 5,000 + 1,000 per query between 1 and 4
        assertThat(e.serviceNanos(6, random)).isEqualTo(10_000);
        assertThat(e.serviceNanos(10, random)).isEqualTo(14_000); // the slope of 4..8 continues
        assertThat(e.meanNanos(8)).isEqualTo(12_000);
    }

    @Test
    void concurrencyRunsBatchesSideBySide() {
        ScenarioBuilder b = new ScenarioBuilder().policy(PolicyKind.CLOCKWORK).rate(1_800).durationS(10).seed(2);
        SimResult one = Simulation.run(b.concurrency(1).build());
        SimResult two = Simulation.run(b.concurrency(2).build());
        assertThat(two.goodputRps()).isGreaterThan(1.2 * one.goodputRps());
        conserved(two.total());
    }

    @Test
    void aDeadReplicaFailsItsBatchesAndTheOthersCarryOn() {
        SimResult r = Simulation.run(new ScenarioBuilder().replicas(2).rate(1_500).fail("r1", 5).durationS(10)
                .seed(4).build());
        conserved(r.total());
        assertThat(r.replicas().get(1).died()).isTrue();
        assertThat(r.replicas().get(1).lifeNanos()).isEqualTo(5_000_000_000L);
        assertThat(r.total().defaults(RejectReason.NO_REPLICA)).isZero();
        // one replica (capacity about 1,000/s at this SLO) serves the second half
        assertThat(r.goodputRps()).isBetween(0.6 * 1_500, 0.95 * 1_500);
    }

    @Test
    void withNoReplicaLeftQueriesGetTheDefault() {
        SimResult r = Simulation.run(new ScenarioBuilder().rate(500).fail("r0", 2).durationS(4).seed(4).build());
        conserved(r.total());
        assertThat(r.total().defaults(RejectReason.NO_REPLICA)).isCloseTo(1_000, Percentage.withPercentage(10));
        assertThat(r.total().good()).isCloseTo(1_000, Percentage.withPercentage(10));
    }

    /**
     * A shared machine's round trips spread: mostly short, a few far longer. The scheduler plans
     * on their low quantile and sends ahead by it, so a long one leaves the replica idle and its
     * queries wait: with the same mean, a spread transport answers fewer in time than a constant one.
     */
    @Test
    void aSpreadTransportIdlesTheReplicaThatAConstantOneKeepsBusy() {
        ScenarioBuilder b = new ScenarioBuilder().policy(PolicyKind.ADAPTIVE).linear(10, 1, 0).sloMs(50).rate(402)
                .overheadMs(3).durationS(20).seed(3);
        SimResult constant = Simulation.run(b.overheadSigma(0).build());
        SimResult spread = Simulation.run(b.overheadSigma(1).build());
        conserved(spread.total());
        assertThat(spread.meanIdleFraction()).isGreaterThan(constant.meanIdleFraction());
        assertThat(spread.goodputRps()).isLessThan(constant.goodputRps());
        assertThat(Simulation.run(b.build()).total().good()).as("seeded").isEqualTo(spread.total().good());
    }
}

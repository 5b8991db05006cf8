package io.servegate.sim.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servegate.sim.SimResult;
import io.servegate.sim.Simulation;
import io.servegate.sim.cli.ScenarioBuilder;
import io.servegate.workload.arrival.ArrivalProcess;
import io.servegate.workload.arrival.ArrivalSchedule;
import io.servegate.workload.arrival.RateTrace;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Arrival processes, rate traces (both layouts) and Zipf popularity. */
class WorkloadTest {

    private static final long S = 1_000_000_000L;

    @TempDir
    Path dir;

    /** Gaps of {@code n} arrivals from the process. */
    private static double[] gaps(ArrivalProcess p, int n) {
        SplittableRandom random = new SplittableRandom(1);
        double[] g = new double[n];
        long t = 0;
        for (int i = 0; i < n; i++) {
            long next = p.next(t, random);
            g[i] = next - t;
            t = next;
        }
        return g;
    }

    private static double mean(double[] x) {
        return java.util.Arrays.stream(x).average().orElseThrow();
    }

    private static double cv2(double[] x) {
        double m = mean(x);
        double v = java.util.Arrays.stream(x).map(g -> (g - m) * (g - m)).sum() / x.length;
        return v / (m * m);
    }

    @Test
    void aSimulatedRunOffersTheArrivalsOfALiveRunWithTheSameSeed() {
        long seed = 42;
        ArrivalSchedule live = new ArrivalSchedule(ArrivalProcess.gamma(500, 4), seed);
        Workload simulated = Workload.generated(() -> ArrivalProcess.gamma(500, 4),
                () -> ModelChooser.weighted(new double[] {1}), new long[] {S}, 10 * S);
        Workload.Stream stream = simulated.open(new SplittableRandom(seed).split());
        Workload.Arrival a = new Workload.Arrival();
        int n = 0;
        while (stream.next(a)) {
            assertThat(a.at).isEqualTo(live.next());
            n++;
        }
        assertThat(n).isGreaterThan(4_000);
        assertThat(live.next()).isGreaterThanOrEqualTo(10 * S);
    }

    @Test
    void poissonGammaAndUniformHaveTheirMeanAndVariability() {
        double[] poisson = gaps(ArrivalProcess.poisson(1_000), 200_000);
        assertThat(mean(poisson)).isCloseTo(1e6, Percentage.withPercentage(1));
        assertThat(cv2(poisson)).isCloseTo(1, Percentage.withPercentage(3));
        double[] gamma = gaps(ArrivalProcess.gamma(1_000, 4), 200_000);
        assertThat(mean(gamma)).isCloseTo(1e6, Percentage.withPercentage(3));
        assertThat(cv2(gamma)).isCloseTo(4, Percentage.withPercentage(10));
        double[] uniform = gaps(ArrivalProcess.uniform(3_000), 3_000);
        for (double g : uniform) {
            assertThat(g).isBetween(333_333.0, 333_334.0);
        }
    }

    @Test
    void onOffArrivesOnlyWhileOnAtTheMeanRate() {
        ArrivalProcess p = ArrivalProcess.onOff(1_000, S, 3 * S);
        SplittableRandom random = new SplittableRandom(2);
        long t = 0;
        int n = 0;
        while ((t = p.next(t, random)) < 40 * S) {
            assertThat(t % (4 * S)).isLessThan(S);
            n++;
        }
        assertThat(n).isCloseTo(40_000, Percentage.withPercentage(3));
    }

    @Test
    void perSecondTraceIsScaledAndPlayed() throws IOException {
        Path f = dir.resolve("t.csv");
        Files.writeString(f, "# comment\nsecond,rate\n0,100\n1,300\n2,0\n3,200\n");
        RateTrace t = RateTrace.read(f, 1, null);
        assertThat(t.counts()).containsExactly(100, 300, 0, 200);
        assertThat(t.meanRate()).isEqualTo(150);
        assertThat(t.durationNanos()).isEqualTo(4 * S);
        RateTrace scaled = t.scaledToMean(1_500);
        assertThat(scaled.counts()).containsExactly(1_000, 3_000, 0, 2_000);
        int[] perSecond = new int[4];
        ArrivalProcess p = scaled.arrivals();
        SplittableRandom random = new SplittableRandom(3);
        long at = 0;
        while ((at = p.next(at, random)) < 400 * S) { // the trace repeats
            perSecond[(int) (at / S % 4)]++;
        }
        assertThat(perSecond[0] / 100.0).isCloseTo(1_000, Percentage.withPercentage(3));
        assertThat(perSecond[1] / 100.0).isCloseTo(3_000, Percentage.withPercentage(3));
        assertThat(perSecond[2]).isZero();
        assertThat(perSecond[3] / 100.0).isCloseTo(2_000, Percentage.withPercentage(3));
    }

    @Test
    void perMinuteCountsAndTheAzureLayout() throws IOException {
        Path minutes = dir.resolve("m.csv");
        Files.writeString(minutes, "600\n1200\n");
        RateTrace m = RateTrace.read(minutes, 60, null);
        assertThat(m.meanRate()).isEqualTo(15);
        assertThat(m.binNanos()).isEqualTo(60 * S);

        Path azure = dir.resolve("a.csv");
        Files.writeString(azure, "HashOwner,HashApp,HashFunction,Trigger,1,2,3\n"
                + "o,a,f1,http,60,0,120\n" + "o,a,f2,timer,0,60,0\n");
        RateTrace all = RateTrace.read(azure, 1, null);
        assertThat(all.counts()).containsExactly(60, 60, 120);
        assertThat(all.binNanos()).isEqualTo(60 * S);
        assertThat(RateTrace.read(azure, 1, "f1").counts()).containsExactly(60, 0, 120);
        assertThatThrownBy(() -> RateTrace.read(azure, 1, "nope")).hasMessageContaining("no function rows");
    }

    @Test
    void theShippedExampleTraceReads() throws IOException {
        RateTrace t = RateTrace.read(Path.of("traces/azure-functions-example.csv"), 1, null);
        assertThat(t.counts()).hasSize(120);
        assertThat(t.meanRate()).isGreaterThan(0);
        SimResult r = Simulation.run(new ScenarioBuilder().trace(t).rate(20).durationS(t.durationNanos() / 1e9).build());
        assertThat(r.offeredRps()).isCloseTo(20, Percentage.withPercentage(3));
    }

    @Test
    void zipfPopularityAndPerModelSlos() {
        double[] w = ModelChooser.zipf(4, 1);
        assertThat(w).containsExactly(1, 0.5, 1 / 3.0, 0.25);
        SimResult r = Simulation.run(new ScenarioBuilder().models(4, 1).sloMs(20, 40).rate(2_000).replicas(2)
                .durationS(20).seed(5).build());
        double sum = 1 + 0.5 + 1 / 3.0 + 0.25;
        long total = r.total().arrived();
        for (int i = 0; i < 4; i++) {
            SimResult.ModelResult m = r.models().get(i);
            assertThat((double) m.stats().arrived() / total).as("share of model %d", i)
                    .isCloseTo(w[i] / sum, Percentage.withPercentage(5));
            assertThat(m.spec().config().sloNanos()).isEqualTo(i % 2 == 0 ? 20_000_000L : 40_000_000L);
            assertThat(m.spec().replicas()).hasSize(2);
            assertThat(m.stats().good()).isGreaterThan((long) (0.9 * m.stats().arrived()));
        }
    }
}

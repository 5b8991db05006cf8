package io.servegate.workload.arrival;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ArrivalPatternTest {

    private static final int N = 200_000;

    @TempDir
    Path dir;

    /** Mean and squared coefficient of variation of N gaps. */
    private static double[] meanAndCv2(ArrivalSchedule a) {
        double sum = 0;
        double sumSquares = 0;
        long last = 0;
        for (int i = 0; i < N; i++) {
            long next = a.next();
            long gap = next - last;
            last = next;
            assertThat(gap).isNotNegative();
            sum += gap;
            sumSquares += (double) gap * gap;
        }
        double mean = sum / N;
        double variance = sumSquares / N - mean * mean;
        return new double[] {mean, variance / (mean * mean)};
    }

    @Test
    void gammaGapsHaveTheRatesMeanAndTheRequestedCv2() {
        for (double cv2 : new double[] {0.25, 1, 4}) {
            double[] m = meanAndCv2(new ArrivalSchedule(ArrivalPattern.gamma(cv2).at(1000), 42));
            // standard error of the mean: 1 ms * sqrt(cv2 / N) <= 4.5 µs; 1.5% is >= 3 of them
            assertThat(m[0]).as("mean gap at CV² %s", cv2).isCloseTo(1_000_000, within(15_000.0));
            assertThat(m[1]).as("CV² at CV² %s", cv2).isCloseTo(cv2, within(0.05 * cv2));
        }
    }

    @Test
    void gammaWithCv2OneIsAsVariableAsPoisson() {
        double[] gamma = meanAndCv2(new ArrivalSchedule(ArrivalPattern.gamma(1).at(2000), 7));
        double[] poisson = meanAndCv2(new ArrivalSchedule(ArrivalPattern.poisson().at(2000), 7));
        assertThat(gamma[1]).isCloseTo(poisson[1], within(0.04));
    }

    @Test
    void theSameSeedGivesTheSameGammaSchedule() {
        ArrivalSchedule a = new ArrivalSchedule(ArrivalPattern.gamma(3).at(500), 9);
        ArrivalSchedule b = new ArrivalSchedule(ArrivalPattern.gamma(3).at(500), 9);
        for (int i = 0; i < 1000; i++) {
            assertThat(b.next()).isEqualTo(a.next());
        }
    }

    @Test
    void aTraceIsReplayedSecondBySecond() {
        RateTrace trace = RateTrace.perSecond("test", new double[] {200, 0, 800, 1000});
        int[] perSecond = new int[8];
        ArrivalSchedule a = new ArrivalSchedule(ArrivalPattern.trace(trace, true).at(1), 3);
        long t = 0;
        while (true) {
            t = a.next();
            if (t >= 8_000_000_000L) {
                break;
            }
            perSecond[(int) (t / 1_000_000_000L)]++;
        }
        // Poisson counts: sd = sqrt(rate), so 5 sd at most 160; the trace repeats after 4 s
        double[] expected = {200, 0, 800, 1000, 200, 0, 800, 1000};
        for (int s = 0; s < 8; s++) {
            assertThat((double) perSecond[s]).as("second %d", s)
                    .isCloseTo(expected[s], within(5 * Math.sqrt(expected[s]) + 0.5));
        }
    }

    @Test
    void aScaledTraceKeepsItsShapeAtTheRequestedMean() {
        RateTrace trace = RateTrace.perSecond("test", new double[] {100, 300});
        assertThat(trace.meanRate()).isEqualTo(200);
        assertThat(trace.scaledToMean(1000).counts()).containsExactly(500, 1500);
        int[] perSecond = new int[2];
        ArrivalSchedule a = new ArrivalSchedule(ArrivalPattern.trace(trace, false).at(1000), 5);
        long t = a.next();
        while (t < 2_000_000_000L) {
            perSecond[(int) (t / 1_000_000_000L)]++;
            t = a.next();
        }
        assertThat((double) perSecond[0]).isCloseTo(500, within(5 * Math.sqrt(500)));
        assertThat((double) perSecond[1]).isCloseTo(1500, within(5 * Math.sqrt(1500)));
    }

    @Test
    void traceFilesAreBareRatesOrCsvWithTheRateLast() throws IOException {
        Path bare = dir.resolve("bare.txt");
        Files.writeString(bare, "# rates per second\n100\n\n250.5\n0\n");
        assertThat(RateTrace.read(bare, 1, null).counts()).containsExactly(100, 250.5, 0);
        Path csv = dir.resolve("trace.csv");
        Files.writeString(csv, "second,rate\n0,10\n1,20\n");
        assertThat(RateTrace.read(csv, 1, null).counts()).containsExactly(10, 20);
        Path broken = dir.resolve("broken.csv");
        Files.writeString(broken, "0,10\n1,lots\n");
        assertThatThrownBy(() -> RateTrace.read(broken, 1, null)).isInstanceOf(IOException.class)
                .hasMessageContaining(":2: not a count");
        Path silent = dir.resolve("silent.txt");
        Files.writeString(silent, "0\n0\n");
        assertThatThrownBy(() -> RateTrace.read(silent, 1, null)).hasMessageContaining("positive count");
    }

    @Test
    void gammaNeedsAPositiveCv2() {
        assertThatThrownBy(() -> ArrivalPattern.gamma(0)).isInstanceOf(IllegalArgumentException.class);
    }
}

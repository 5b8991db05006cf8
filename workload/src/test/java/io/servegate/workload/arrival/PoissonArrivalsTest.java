package io.servegate.workload.arrival;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class PoissonArrivalsTest {

    private static final int N = 200_000;

    @Test
    void gapsAreExponentialWithTheRatesMean() {
        ArrivalSchedule arrivals = new ArrivalSchedule(ArrivalProcess.poisson(2000), 42);
        double sum = 0;
        double sumSquares = 0;
        long aboveMean = 0;
        long last = 0;
        for (int i = 0; i < N; i++) {
            long next = arrivals.next();
            long gap = next - last;
            last = next;
            assertThat(gap).isNotNegative();
            sum += gap;
            sumSquares += (double) gap * gap;
            if (gap > 500_000) {
                aboveMean++;
            }
        }
        double mean = sum / N;
        double sd = Math.sqrt(sumSquares / N - mean * mean);
        // the standard error of the mean is 500 µs / sqrt(200 000) ≈ 1.1 µs: 1% is ~4.5 of them
        assertThat(mean).isCloseTo(500_000, within(5_000.0));
        // exponential: standard deviation equals the mean, and P(gap > mean) = 1/e
        assertThat(sd / mean).isCloseTo(1.0, within(0.02));
        assertThat(aboveMean / (double) N).isCloseTo(Math.exp(-1), within(0.005));
    }

    @Test
    void theSameSeedGivesTheSameSchedule() {
        ArrivalSchedule a = new ArrivalSchedule(ArrivalProcess.poisson(500), 7);
        ArrivalSchedule b = new ArrivalSchedule(ArrivalProcess.poisson(500), 7);
        ArrivalSchedule c = new ArrivalSchedule(ArrivalProcess.poisson(500), 8);
        boolean differs = false;
        for (int i = 0; i < 1000; i++) {
            long t = a.next();
            assertThat(b.next()).isEqualTo(t);
            differs |= c.next() != t;
        }
        assertThat(differs).isTrue();
    }

    @Test
    void rejectsNonsenseRates() {
        assertThatThrownBy(() -> ArrivalProcess.poisson(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ArrivalProcess.poisson(Double.NaN)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ArrivalProcess.poisson(Double.POSITIVE_INFINITY))
                .isInstanceOf(IllegalArgumentException.class);
    }
}

package io.servegate.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class PoissonArrivalsTest {

    private static final int N = 200_000;

    @Test
    void gapsAreExponentialWithTheRatesMean() {
        PoissonArrivals arrivals = new PoissonArrivals(2000, 42);
        assertThat(arrivals.meanGapNanos()).isEqualTo(500_000.0);
        double sum = 0;
        double sumSquares = 0;
        long aboveMean = 0;
        for (int i = 0; i < N; i++) {
            long gap = arrivals.nextGapNanos();
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
        PoissonArrivals a = new PoissonArrivals(500, 7);
        PoissonArrivals b = new PoissonArrivals(500, 7);
        PoissonArrivals c = new PoissonArrivals(500, 8);
        boolean differs = false;
        for (int i = 0; i < 1000; i++) {
            long gap = a.nextGapNanos();
            assertThat(b.nextGapNanos()).isEqualTo(gap);
            differs |= c.nextGapNanos() != gap;
        }
        assertThat(differs).isTrue();
    }

    @Test
    void rejectsNonsenseRates() {
        assertThatThrownBy(() -> new PoissonArrivals(0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new PoissonArrivals(Double.NaN, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new PoissonArrivals(Double.POSITIVE_INFINITY, 1))
                .isInstanceOf(IllegalArgumentException.class);
    }
}

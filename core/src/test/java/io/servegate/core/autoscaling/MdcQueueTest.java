package io.servegate.core.autoscaling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class MdcQueueTest {

    @Test
    void oneServerIsPollaczekKhinchine() {
        for (double rho : new double[] {0.1, 0.5, 0.9}) {
            double d = 0.004;
            double exact = d + rho * d / (2 * (1 - rho));
            assertThat(MdcQueue.meanLatency(rho / d, 1, d)).isCloseTo(exact, within(1e-12));
        }
    }

    @Test
    void severalServersWaitAboutHalfAsLongAsMmc() {
        // M/M/c's wait from Erlang's C formula, computed independently; Cosmetatos' M/D/c wait is
        // half of it, corrected upwards by f(c)·g(ρ)
        for (int c : new int[] {2, 5, 16}) {
            for (double rho : new double[] {0.5, 0.8, 0.95}) {
                double mu = 100;
                double lambda = rho * c * mu;
                double mmcWait = erlangC(c, lambda / mu) / (c * mu - lambda);
                double mdcWait = MdcQueue.meanLatency(lambda, c, 1 / mu) - 1 / mu;
                double f = (c - 1) * (Math.sqrt(4 + 5.0 * c) - 2) / (16.0 * c);
                assertThat(mdcWait / mmcWait).isCloseTo(0.5 * (1 + f * (1 - rho) / rho), within(1e-9));
            }
        }
    }

    private static double erlangC(int c, double a) {
        double sum = 0;
        double term = 1;
        for (int k = 0; k < c; k++) {
            sum += term;
            term *= a / (k + 1);
        }
        double top = term * c / (c - a); // a^c/c! · 1/(1 − ρ)
        return top / (sum + top);
    }

    @Test
    void interferenceSlowsService() {
        double[] free = {100, 100, 100, 100};
        double[] interfering = {100, 80, 65, 50};
        assertThat(MdcQueue.meanLatency(150, interfering)).isGreaterThan(MdcQueue.meanLatency(150, free));
        assertThat(MdcQueue.meanLatency(199, interfering)).isFinite();
        assertThat(MdcQueue.meanLatency(200, interfering)).isInfinite();
    }

    @Test
    void latencyRisesWithLoad() {
        double previous = 0;
        for (double lambda = 10; lambda < 400; lambda += 10) {
            double w = MdcQueue.meanLatency(lambda, 4, 0.01);
            assertThat(w).isGreaterThan(previous);
            previous = w;
        }
    }
}

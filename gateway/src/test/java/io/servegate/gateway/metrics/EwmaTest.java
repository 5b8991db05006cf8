package io.servegate.gateway.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The moving rates decay as the load average does: by exp(-interval / window) per idle tick. */
class EwmaTest {

    private static final Duration TICK = Duration.ofSeconds(5);

    @Test
    void startsAtTheFirstIntervalsRateThenDecaysByTheWindowsFactor() {
        for (int minutes : new int[] {1, 5, 15}) {
            Ewma rate = new Ewma(TICK, Duration.ofMinutes(minutes));
            assertThat(rate.ratePerSecond()).isZero();
            rate.tick(100);
            assertThat(rate.ratePerSecond()).isCloseTo(20.0, within(1e-12));
            for (int i = 0; i < 12; i++) {
                rate.tick(0);
            }
            // one idle minute
            assertThat(rate.ratePerSecond()).as(minutes + " min").isCloseTo(20.0 * Math.exp(-1.0 / minutes),
                    within(1e-9));
        }
    }

    @Test
    void convergesToASteadyRate() {
        Ewma rate = new Ewma(TICK, Duration.ofMinutes(1));
        rate.tick(0);
        for (int i = 0; i < 200; i++) {
            rate.tick(35);
        }
        assertThat(rate.ratePerSecond()).isCloseTo(7.0, within(1e-6));
    }
}

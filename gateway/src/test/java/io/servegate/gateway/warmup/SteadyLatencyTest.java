package io.servegate.gateway.warmup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SteadyLatencyTest {

    @Test
    void steadyOnlyAfterTheMinimumAndWhenTheLastRoundsAgree() {
        SteadyLatency s = new SteadyLatency(4, 3, 0.25);
        assertThat(s.add(100)).isFalse();
        assertThat(s.add(100)).isFalse();
        assertThat(s.add(100)).as("three equal rounds, but fewer than the minimum").isFalse();
        assertThat(s.add(100)).isTrue();
        assertThat(s.rounds()).isEqualTo(4);
    }

    @Test
    void oneFastRoundAfterSlowOnesIsNotSteady() {
        SteadyLatency s = new SteadyLatency(3, 3, 0.25);
        assertThat(s.add(1000)).isFalse();
        assertThat(s.add(900)).isFalse();
        assertThat(s.add(100)).isFalse();
        assertThat(s.add(110)).as("900 still in the window").isFalse();
        assertThat(s.add(120)).as("100, 110, 120: within 25 % of 100").isTrue();
    }

    @Test
    void aRoundBeyondTheToleranceKeepsItUnsteady() {
        SteadyLatency s = new SteadyLatency(3, 3, 0.25);
        s.add(100);
        s.add(100);
        assertThat(s.add(126)).isFalse();
        assertThat(s.add(125)).as("100, 126, 125").isFalse();
        assertThat(s.add(125)).as("126, 125, 125").isTrue();
    }

    @Test
    void refusesAWindowItCannotJudge() {
        assertThatThrownBy(() -> new SteadyLatency(3, 1, 0.25)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SteadyLatency(2, 3, 0.25)).isInstanceOf(IllegalArgumentException.class);
    }
}

package io.servegate.core.autoscaling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ArrivalEnvelopeTest {

    private static final long MS = 1_000_000L;
    private static final long S = 1_000 * MS;

    @Test
    void theBusiestWindowOfEachLengthIsFound() {
        ArrivalEnvelope e = new ArrivalEnvelope();
        // one arrival every 10 ms for 10 s (100/s), then a burst of 50 within 100 ms at t = 10 s
        for (long t = 0; t < 10 * S; t += 10 * MS) {
            e.record(t);
        }
        for (int i = 0; i < 50; i++) {
            e.record(10 * S + i * 2 * MS);
        }
        long now = 10 * S + 100 * MS;
        assertThat(e.maxArrivals(100 * MS, 60 * S, now)).isEqualTo(50);
        assertThat(e.maxArrivals(1 * S, 60 * S, now)).isEqualTo(50 + 90);
        assertThat(e.maxArrivals(60 * S, 60 * S, now)).isEqualTo(1_000 + 50);
        // the steady part alone: 10 per 100 ms before the burst
        assertThat(e.maxArrivals(100 * MS, 60 * S, now) - e.maxArrivals(100 * MS, 100 * MS, now)).isZero();
        assertThat(e.maxArrivals(1 * S, 60 * S, now) - e.maxArrivals(5 * S, 60 * S, now)).isEqualTo(140 - 540);
    }

    @Test
    void windowsEndingBeforeTheLookBackDoNotCount() {
        ArrivalEnvelope e = new ArrivalEnvelope();
        for (int i = 0; i < 500; i++) {
            e.record(i * MS); // 500 in the first half second
        }
        e.record(40 * S);
        assertThat(e.maxArrivals(500 * MS, 60 * S, 40 * S)).isEqualTo(500);
        assertThat(e.maxArrivals(500 * MS, 2 * S, 40 * S)).isEqualTo(1);
        // the ring wraps: two minutes on, the old burst is gone even from a 60 s window
        assertThat(e.maxArrivals(60 * S, 60 * S, 200 * S)).isZero();
    }

    @Test
    void theEnvelopeGrowsWithTheWindow() {
        ArrivalEnvelope e = new ArrivalEnvelope();
        java.util.SplittableRandom random = new java.util.SplittableRandom(7);
        long t = 0;
        while (t < 90 * S) {
            t += (long) (-Math.log(1 - random.nextDouble()) * 1e6); // Poisson, 1,000/s
            e.record(t);
        }
        long[] env = e.envelope(60 * S, t);
        for (int i = 1; i < env.length; i++) {
            assertThat(env[i]).isGreaterThanOrEqualTo(env[i - 1]);
        }
        assertThat(env[env.length - 1]).isBetween(58_000L, 62_000L);
    }

    @Test
    void outOfRangeReadsAreRefused() {
        ArrivalEnvelope e = new ArrivalEnvelope();
        assertThatThrownBy(() -> e.maxArrivals(0, S, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> e.maxArrivals(S, 61 * S, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}

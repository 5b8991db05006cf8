package io.servegate.containers.emulated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Stalls of 200 ms every 5 s from an origin of 1,000 (all times in ms here, scaled to ns). */
class StallsTest {

    private static final long MS = 1_000_000L;
    private final Stalls stalls = new Stalls(1_000 * MS, 5_000 * MS, 200 * MS);

    private long finishMs(long startMs, long workMs) {
        return stalls.finish(startMs * MS, workMs * MS) / MS;
    }

    @Test
    void workBetweenStallsTakesItsOwnTime() {
        assertThat(finishMs(1_000, 10)).isEqualTo(1_010);
        assertThat(finishMs(5_900, 100)).isEqualTo(6_000); // ends exactly as the first stall begins
        assertThat(finishMs(6_200, 10)).isEqualTo(6_210);  // starts exactly as it ends
    }

    @Test
    void workArrivingDuringAStallWaitsForItsEnd() {
        assertThat(finishMs(6_050, 10)).isEqualTo(6_210);
        assertThat(finishMs(11_000, 10)).isEqualTo(11_210); // the second stall, at 11 s
    }

    @Test
    void workInFlightWhenAStallBeginsIsHeldForAllOfIt() {
        assertThat(finishMs(5_990, 30)).isEqualTo(6_220); // 10 ms before it, 20 after
        // long enough to meet two stalls
        assertThat(finishMs(5_000, 6_000)).isEqualTo(11_400);
    }

    @Test
    void noStallsWithAZeroLength() {
        assertThat(Stalls.NONE.finish(6_050 * MS, 10 * MS)).isEqualTo(6_060 * MS);
    }

    @Test
    void aStallMustBeShorterThanItsPeriod() {
        assertThatThrownBy(() -> new Stalls(0, 200 * MS, 200 * MS)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Stalls(0, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}

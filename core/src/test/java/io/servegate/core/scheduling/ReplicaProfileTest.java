package io.servegate.core.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ReplicaProfileTest {

    private static final long MS = 1_000_000L;
    private static final long MAX_AGE = 2_000 * MS;

    private static ReplicaProfile seeded(long factor) {
        ReplicaProfile p = new ReplicaProfile(16, MAX_AGE, 64);
        for (int b = 1; b <= 32; b *= 2) {
            p.record(b, factor * (5 * MS + b * MS / 2), MS, 0);
        }
        return p;
    }

    @Test
    void measuredSizesAreInterpolatedLinearly() {
        ReplicaProfile p = seeded(1);
        assertThat(p.serviceNanos(1)).isEqualTo(5_500_000L);
        assertThat(p.serviceNanos(12)).isEqualTo(11 * MS);
        assertThat(p.largestWithin(13 * MS, 64)).isEqualTo(16);
    }

    @Test
    void whenOnlyOneSizeIsStillMeasuredTheEarlierShapeIsKeptAtItsLevel() {
        // batches of one only, for longer than the age limit, and no estimate read meanwhile
        ReplicaProfile p = seeded(1);
        for (long t = 0; t <= 3 * MAX_AGE; t += 100 * MS) {
            p.record(1, 5_500_000L, MS, t);
        }
        // not 8 × 5.5 ms, which would keep batches at one for good
        assertThat(p.serviceNanos(8)).isEqualTo(9 * MS);

        // a slow spell measured at size 1 only scales the whole profile
        ReplicaProfile slow = seeded(10);
        slow.record(1, 5_500_000L, MS, 3 * MAX_AGE);
        assertThat(slow.serviceNanos(16)).isEqualTo(13 * MS);
    }

    @Test
    void overheadIsALowQuantileSoThatStallsDoNotMakeEveryQueryLookInfeasible() {
        ReplicaProfile p = new ReplicaProfile(16, MAX_AGE, 64);
        p.record(1, 5 * MS, 90 * MS, 0); // one cold round trip
        assertThat(p.overheadNanos()).isEqualTo(90 * MS);
        for (int i = 1; i <= 9; i++) {
            p.record(1, 5 * MS, MS, i);
        }
        assertThat(p.overheadNanos()).isEqualTo(MS);
        for (int i = 0; i < 20; i++) {
            p.record(1, 5 * MS, 50 * MS, 100 + i); // the gateway stalls
        }
        assertThat(p.overheadNanos()).isEqualTo(MS);
        assertThat(p.fresh(MAX_AGE)).isTrue();
        assertThat(p.fresh(MAX_AGE + 200)).isFalse();
    }

    @Test
    void unmeasuredSizesAreSentFreelyUntilAFirstBatchProvesCold() {
        ReplicaProfile p = seeded(1); // sizes 1, 2, 4, ..., 32 measured, none cold
        assertThat(p.sendable(7, MS)).isEqualTo(7);
        assertThat(p.sendable(9, 2 * MS)).isEqualTo(9);
    }

    @Test
    void afterAColdFirstBatchAnUnmeasuredSizeIsTriedOncePerInterval() {
        ReplicaProfile p = seeded(1);
        p.record(3, 300 * MS, MS, MS); // the first batch of 3: 300 ms where 6.5 ms was expected
        long t = 2 * MS;
        assertThat(p.sendable(3, t)).isEqualTo(3); // measured now
        assertThat(p.sendable(7, t)).as("explores 7").isEqualTo(7);
        assertThat(p.sendable(9, t + MS)).as("then the largest size measured below 9").isEqualTo(8);
        assertThat(p.sendable(5, t + ReplicaProfile.EXPLORE_INTERVAL_NANOS - 1)).isEqualTo(4);
        assertThat(p.sendable(5, t + ReplicaProfile.EXPLORE_INTERVAL_NANOS)).isEqualTo(5);
    }

    @Test
    void aNewSizeWhoseFirstBatchIsNormalClearsTheColdJudgement() {
        ReplicaProfile p = seeded(1);
        p.record(3, 300 * MS, MS, MS); // a stall on the first batch of 3
        long t = 2 * MS;
        assertThat(p.sendable(7, t)).as("explores 7").isEqualTo(7);
        assertThat(p.sendable(9, t)).as("within the interval").isEqualTo(8);
        p.record(7, 8 * MS, MS, t + MS); // the first batch of 7 costs what 7 should
        assertThat(p.sendable(9, t + 2 * MS)).as("sent freely again").isEqualTo(9);
        p.record(9, 300 * MS, MS, t + 3 * MS); // and a cold first batch judges the replica cold again
        assertThat(p.sendable(11, t + 4 * MS)).isEqualTo(9);
    }
}

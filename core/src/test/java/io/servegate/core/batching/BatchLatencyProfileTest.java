package io.servegate.core.batching;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BatchLatencyProfileTest {

    private static final long S = 1_000_000_000L;

    @Test
    void knowsNothingWithoutSamples() {
        assertNull(new BatchLatencyProfile(10, S).estimates(8, 0));
    }

    @Test
    void estimatesASizeByTheMedianOfItsRecentSamples() {
        BatchLatencyProfile p = new BatchLatencyProfile(3, S);
        p.record(2, 100, 0);
        p.record(2, 900, 0); // one stall
        p.record(2, 200, 0);
        assertEquals(200, p.estimates(2, 0)[2]);
        p.record(2, 150, 0); // a window of 3: the oldest sample goes first
        assertEquals(200, p.estimates(2, 0)[2]);
        p.record(2, 150, 0);
        p.record(2, 150, 0);
        assertEquals(150, p.estimates(2, 0)[2]);
    }

    @Test
    void interpolatesBetweenAndExtrapolatesBeyondMeasuredSizes() {
        BatchLatencyProfile p = new BatchLatencyProfile(10, S);
        p.record(2, 60, 0);  // a profile 50 + 5 b
        p.record(6, 80, 0);
        long[] e = p.estimates(10, 0);
        // below the smallest measured size: no cheaper than it (upper bound); between: linear;
        // above: the line through the two largest
        assertArrayEquals(new long[] {0, 60, 60, 65, 70, 75, 80, 85, 90, 95, 100}, e);
    }

    @Test
    void scalesProportionallyFromASingleMeasuredSize() {
        BatchLatencyProfile p = new BatchLatencyProfile(10, S);
        p.record(2, 100, 0);
        assertArrayEquals(new long[] {0, 100, 100, 150, 200}, p.estimates(4, 0));
    }

    @Test
    void neverEstimatesALargerBatchAsCheaper() {
        BatchLatencyProfile p = new BatchLatencyProfile(10, S);
        p.record(1, 100, 0);
        p.record(2, 90, 0); // noise
        p.record(3, 120, 0);
        assertArrayEquals(new long[] {0, 100, 100, 120}, p.estimates(3, 0));
    }

    @Test
    void forgetsSamplesOlderThanTheMaximumAge() {
        BatchLatencyProfile p = new BatchLatencyProfile(10, S);
        p.record(1, 1_000, 0);
        p.record(2, 1_200, S / 2);
        assertEquals(1_000, p.estimates(2, S)[1]); // both still young at 1 s
        assertArrayEquals(new long[] {0, 1_200, 1_200}, p.estimates(2, S + 1)); // size 1's sample aged out
        assertNull(p.estimates(2, 2 * S));
    }

    @Test
    void aColdFirstBatchOfASizeIsBoundedByWhatTheOtherSizesAllow() {
        BatchLatencyProfile p = new BatchLatencyProfile(16, S);
        for (int i = 0; i < 10; i++) {
            p.record(1, 11, i);
        }
        p.record(2, 312, 10); // the first batch of two: a cold shape
        p.record(8, 318, 11); // and of eight
        long[] e = p.estimates(8, 11);
        assertEquals(22, e[2]); // two batches of one, not 312
        assertEquals(88, e[8]); // not 318, which would keep every size above 8 unsent
        p.record(2, 12, 12); // sent again: it is fast
        p.record(2, 12, 13);
        assertEquals(12, p.estimates(8, 13)[2]);
    }

    @Test
    void aColdFirstBatchOfOneIsBoundedByALargerSize() {
        BatchLatencyProfile p = new BatchLatencyProfile(16, S);
        for (int i = 0; i < 5; i++) {
            p.record(4, 14, i);
        }
        p.record(1, 311, 5);
        assertEquals(14, p.estimates(4, 5)[1]);
    }

    @Test
    void aSizeThatKeepsMeasuringSlowIsBelieved() {
        BatchLatencyProfile p = new BatchLatencyProfile(16, S);
        for (int i = 0; i < 10; i++) {
            p.record(1, 11, i);
        }
        p.record(2, 300, 10);
        p.record(2, 300, 11);
        assertEquals(22, p.estimates(2, 11)[2]);
        p.record(2, 300, 12);
        assertEquals(300, p.estimates(2, 12)[2]);
    }

    @Test
    void aModelThatSlowsDownEverywhereIsNoOutlier() {
        BatchLatencyProfile p = new BatchLatencyProfile(16, S);
        p.record(1, 110, 0);
        p.record(2, 120, 0);
        p.record(4, 140, 0);
        assertArrayEquals(new long[] {0, 110, 120, 130, 140}, p.estimates(4, 0));
    }

    @Test
    void outliersAgeOut() {
        BatchLatencyProfile p = new BatchLatencyProfile(16, S);
        for (int i = 0; i < 3; i++) {
            p.record(2, 300, i); // a slow spell, believed
        }
        p.record(1, 11, S + 10);
        assertArrayEquals(new long[] {0, 11, 22}, p.estimates(2, S + 10));
    }

    @Test
    void rejectsNonsense() {
        assertThrows(IllegalArgumentException.class, () -> new BatchLatencyProfile(0, S));
        assertThrows(IllegalArgumentException.class, () -> new BatchLatencyProfile(1, 0));
        assertThrows(IllegalArgumentException.class, () -> new BatchLatencyProfile(1, S).record(0, 1, 0));
    }

    /** Records {@code n} batches of each size 1..{@code sizes}, {@code 10 + b} ms times exp(σZ − σ²/2), seeded. */
    private static BatchLatencyProfile lognormal(double sigma, int sizes, int n) {
        BatchLatencyProfile p = new BatchLatencyProfile(16, S);
        java.util.Random random = new java.util.Random(7);
        for (int i = 0; i < n; i++) {
            for (int b = 1; b <= sizes; b++) {
                double jitter = Math.exp(sigma * random.nextGaussian() - sigma * sigma / 2);
                p.record(b, Math.round((10 + b) * 1_000_000L * jitter), 0);
            }
        }
        return p;
    }

    @Test
    void plansSpreadBatchesAboveTheirMedian() {
        BatchLatencyProfile p = lognormal(0.3, 4, 16);
        double sigma = p.spread(0);
        assertTrue(sigma > 0.22 && sigma < 0.38, "the spread estimates sigma 0.3, got " + sigma);
        long[] e = p.estimates(4, 0);
        // median of 10 + b ms times exp(-σ²/2) is 0.956·(10 + b); planned on the upper quartile, 1.22 times that
        for (int b = 1; b <= 4; b++) {
            double median = (10 + b) * 1e6 * Math.exp(-0.045);
            assertTrue(e[b] > 1.1 * median, "size " + b + " planned at " + e[b] + ", median " + median);
        }
    }

    @Test
    void plansSteadyBatchesOnTheirMedian() {
        BatchLatencyProfile p = lognormal(0.01, 4, 16);
        assertTrue(p.spread(0) < 0.02, "spread " + p.spread(0));
        long[] e = p.estimates(4, 0);
        for (int b = 1; b <= 4; b++) {
            assertTrue(Math.abs(e[b] - (10 + b) * 1e6) < 0.02 * (10 + b) * 1e6, "size " + b + ": " + e[b]);
        }
    }

    @Test
    void aFewSlowBatchesDoNotMakeTheSamplesLookSpread() {
        BatchLatencyProfile p = new BatchLatencyProfile(16, S);
        for (int i = 0; i < 16; i++) {
            for (int b = 1; b <= 2; b++) {
                // steady, but one batch in eight stalls for 200 ms
                p.record(b, (10 + b) * 1_000_000L + (i % 8 == 0 ? 200_000_000L : 0), 0);
            }
        }
        assertEquals(0, p.spread(0));
        assertArrayEquals(new long[] {0, 11_000_000, 12_000_000}, p.estimates(2, 0));
    }
}

package io.servegate.core.batching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class FixedBatchingPolicyTest {

    @Test
    void constantRegardlessOfFeedback() {
        FixedBatchingPolicy p = new FixedBatchingPolicy(8);
        p.onBatchCompleted(8, 0);
        p.onBatchCompleted(8, Long.MAX_VALUE);
        assertEquals(8, p.maxBatchSize());
    }

    @Test
    void rejectsNonPositiveSize() {
        assertThrows(IllegalArgumentException.class, () -> new FixedBatchingPolicy(0));
        assertThrows(IllegalArgumentException.class, () -> new FixedBatchingPolicy(-3));
    }
}

package io.servegate.gateway.batching;

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
    void sizeOneMeansNoBatching() {
        BatchQueue<String> q = new BatchQueue<>(new FixedBatchingPolicy(1), 0, 10);
        q.offer("a", 100, 0);
        q.offer("b", 100, 0);
        assertEquals(1, q.tryDispatch(0, t -> { }).size());
    }

    @Test
    void rejectsNonPositiveSize() {
        assertThrows(IllegalArgumentException.class, () -> new FixedBatchingPolicy(0));
        assertThrows(IllegalArgumentException.class, () -> new FixedBatchingPolicy(-3));
    }
}

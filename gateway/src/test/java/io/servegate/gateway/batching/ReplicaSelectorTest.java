package io.servegate.gateway.batching;

import io.servegate.core.batching.FixedBatchingPolicy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReplicaSelectorTest {

    @Test
    void emptyGivesNull() {
        assertNull(ReplicaSelector.leastLoaded(List.<String>of(), s -> 0));
    }

    @Test
    void picksMinimum() {
        Map<String, Integer> loads = Map.of("a", 5, "b", 2, "c", 7);
        assertEquals("b", ReplicaSelector.leastLoaded(List.of("a", "b", "c"), loads::get));
    }

    @Test
    void tiesGoToFirst() {
        Map<String, Integer> loads = Map.of("a", 3, "b", 1, "c", 1);
        assertEquals("b", ReplicaSelector.leastLoaded(List.of("a", "b", "c"), loads::get));
        assertEquals("c", ReplicaSelector.leastLoaded(List.of("a", "c", "b"), loads::get));
    }

    @Test
    void singleCandidateEvenAtMaxLoad() {
        assertEquals("x", ReplicaSelector.leastLoaded(List.of("x"), s -> Integer.MAX_VALUE));
    }

    @Test
    void readsEachLoadOnce() {
        List<String> reads = new ArrayList<>();
        ReplicaSelector.leastLoaded(List.of("a", "b", "c"), s -> {
            reads.add(s);
            return 1;
        });
        assertEquals(List.of("a", "b", "c"), reads);
    }

    @Test
    void worksWithBatchQueueLoad() {
        BatchQueue<String> busy = new BatchQueue<>(new FixedBatchingPolicy(4), 0, 10);
        BatchQueue<String> idle = new BatchQueue<>(new FixedBatchingPolicy(4), 0, 10);
        busy.offer("t", 100, 0);
        assertSame(idle, ReplicaSelector.leastLoaded(List.of(busy, idle), BatchQueue::load));
    }
}

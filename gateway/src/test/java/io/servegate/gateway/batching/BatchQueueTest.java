package io.servegate.gateway.batching;

import io.servegate.core.batching.AimdBatchingPolicy;
import io.servegate.core.batching.BatchingPolicy;
import io.servegate.core.batching.FixedBatchingPolicy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class BatchQueueTest {

    private static final long MS = 1_000_000L;
    private static final long FAR = 1_000 * MS;
    private static final Consumer<String> NO_EXPIRY = t -> {
        throw new AssertionError("unexpected expiry of " + t);
    };

    /** Fixed size that records feedback. */
    private static final class RecordingPolicy implements BatchingPolicy {
        volatile int max;
        final List<long[]> feedback = Collections.synchronizedList(new ArrayList<>());

        RecordingPolicy(int max) {
            this.max = max;
        }

        @Override
        public int maxBatchSize() {
            return max;
        }

        @Override
        public void onBatchCompleted(int batchSize, long latencyNanos) {
            feedback.add(new long[] {batchSize, latencyNanos});
        }
    }

    private static BatchQueue<String> queue(int max, long batchWait, int capacity) {
        return new BatchQueue<>(new FixedBatchingPolicy(max), batchWait, capacity);
    }

    @Test
    void dispatchesEarliestDeadlineFirstWithTiesByArrival() {
        BatchQueue<String> q = queue(10, 0, 10);
        q.offer("d30", 30 * MS, 0);
        q.offer("d10-first", 10 * MS, 1);
        q.offer("d20", 20 * MS, 2);
        q.offer("d10-second", 10 * MS, 3);
        Batch<String> b = q.tryDispatch(4, NO_EXPIRY);
        assertEquals(List.of("d10-first", "d10-second", "d20", "d30"), b.items());
        assertEquals(4, b.dispatchedAt());
    }

    @Test
    void batchTakesOnlyMaxMostUrgentTasks() {
        BatchQueue<String> q = queue(2, 0, 10);
        q.offer("c", 3 * FAR, 0);
        q.offer("a", FAR, 0);
        q.offer("b", 2 * FAR, 0);
        assertEquals(List.of("a", "b"), q.tryDispatch(0, NO_EXPIRY).items());
        assertEquals(1, q.size());
    }

    @Test
    void batchIsImmutable() {
        BatchQueue<String> q = queue(2, 0, 10);
        q.offer("a", FAR, 0);
        Batch<String> b = q.tryDispatch(0, NO_EXPIRY);
        assertThrows(UnsupportedOperationException.class, () -> b.items().add("x"));
    }

    @Test
    void rejectsWhenFullAndCapacityCountsOnlyQueuedTasks() {
        BatchQueue<String> q = queue(2, 0, 2);
        assertTrue(q.offer("a", FAR, 0));
        assertTrue(q.offer("b", FAR, 0));
        assertFalse(q.offer("c", FAR, 0));
        assertEquals(2, q.size());
        assertNotNull(q.tryDispatch(0, NO_EXPIRY));
        // The in-flight batch frees queue capacity.
        assertTrue(q.offer("c", FAR, 1));
        assertTrue(q.offer("d", FAR, 1));
        assertFalse(q.offer("e", FAR, 1));
    }

    @Test
    void expiredTasksAreDroppedBeforeFormingBatch() {
        BatchQueue<String> q = queue(3, 0, 10);
        q.offer("late1", 5 * MS, 0);
        q.offer("ok1", 50 * MS, 0);
        q.offer("late2", 10 * MS, 0); // deadline == now counts as expired
        q.offer("ok2", 60 * MS, 0);
        List<String> expired = new ArrayList<>();
        Batch<String> b = q.tryDispatch(10 * MS, expired::add);
        assertEquals(List.of("late1", "late2"), expired);
        assertEquals(List.of("ok1", "ok2"), b.items());
        assertEquals(0, q.size());
    }

    @Test
    void onlyExpiredTasksGiveNoBatch() {
        BatchQueue<String> q = queue(3, 0, 10);
        q.offer("late", MS, 0);
        List<String> expired = new ArrayList<>();
        assertNull(q.tryDispatch(2 * MS, expired::add));
        assertEquals(List.of("late"), expired);
        assertFalse(q.inFlight());
        assertEquals(Long.MAX_VALUE, q.nextDispatchTime(2 * MS));
    }

    @Test
    void throwingExpiryCallbackHandsOverAllAndFormsNoBatch() {
        BatchQueue<String> q = queue(3, 0, 10);
        q.offer("late1", MS, 0);
        q.offer("late2", MS, 0);
        q.offer("ok", FAR, 0);
        List<String> seen = new ArrayList<>();
        RuntimeException e = assertThrows(IllegalStateException.class,
                () -> q.tryDispatch(2 * MS, t -> {
                    seen.add(t);
                    throw new IllegalStateException(t);
                }));
        assertEquals("late1", e.getMessage());
        assertEquals(1, e.getSuppressed().length);
        assertEquals(List.of("late1", "late2"), seen);
        assertFalse(q.inFlight());
        assertEquals(List.of("ok"), q.tryDispatch(2 * MS, NO_EXPIRY).items());
    }

    @Test
    void delayedBatchingWaitsForWindow() {
        BatchQueue<String> q = queue(4, 2 * MS, 10);
        q.offer("a", FAR, 0);
        assertNull(q.tryDispatch(0, NO_EXPIRY));
        q.offer("b", FAR, MS);
        assertNull(q.tryDispatch(2 * MS - 1, NO_EXPIRY));
        assertEquals(2 * MS, q.nextDispatchTime(2 * MS - 1));
        Batch<String> b = q.tryDispatch(2 * MS, NO_EXPIRY);
        assertEquals(List.of("a", "b"), b.items());
    }

    @Test
    void delayedBatchingDispatchesImmediatelyWhenFull() {
        BatchQueue<String> q = queue(3, 2 * MS, 10);
        q.offer("a", FAR, 0);
        q.offer("b", FAR, 0);
        assertNull(q.tryDispatch(0, NO_EXPIRY));
        q.offer("c", FAR, 0);
        assertEquals(0, q.nextDispatchTime(0));
        assertEquals(3, q.tryDispatch(0, NO_EXPIRY).size());
    }

    @Test
    void delayedBatchingWindowFollowsArrivalNotDeadlineOrder() {
        BatchQueue<String> q = queue(4, 2 * MS, 10);
        q.offer("old-far", FAR, 0);
        q.offer("new-urgent", 100 * MS, MS);
        // The oldest arrival (t=0) opens the window although "new-urgent" is first in EDF order.
        assertEquals(2 * MS, q.nextDispatchTime(MS));
        assertEquals(List.of("new-urgent", "old-far"), q.tryDispatch(2 * MS, NO_EXPIRY).items());
    }

    @Test
    void oldestArrivalIsTrackedWhenTasksLeaveOutOfArrivalOrder() {
        BatchQueue<String> q = queue(1, 2 * MS, 10);
        q.offer("old-far", FAR, 0);
        q.offer("new-urgent", 100 * MS, MS);
        Batch<String> b1 = q.tryDispatch(2 * MS, NO_EXPIRY);
        assertEquals(List.of("new-urgent"), b1.items());
        q.complete(b1, 3 * MS);
        q.offer("newest", FAR, 3 * MS);
        // "old-far" (arrived at 0) has waited past the window; "newest" must not reset it.
        assertEquals(3 * MS, q.nextDispatchTime(3 * MS));
        assertEquals(List.of("old-far"), q.tryDispatch(3 * MS, NO_EXPIRY).items());
    }

    @Test
    void nextDispatchTimeValues() {
        BatchQueue<String> q = queue(4, 5 * MS, 10);
        assertEquals(Long.MAX_VALUE, q.nextDispatchTime(0), "empty");
        q.offer("a", 100 * MS, 10 * MS);
        assertEquals(15 * MS, q.nextDispatchTime(10 * MS), "end of batching window");
        q.offer("b", 12 * MS, 11 * MS);
        assertEquals(12 * MS, q.nextDispatchTime(11 * MS), "earliest deadline comes first");
        assertEquals(12 * MS, q.nextDispatchTime(12 * MS), "expired task: now");
        List<String> expired = new ArrayList<>();
        assertNull(q.tryDispatch(12 * MS, expired::add));
        assertEquals(List.of("b"), expired);
        assertEquals(15 * MS, q.nextDispatchTime(12 * MS));
        assertEquals(16 * MS, q.nextDispatchTime(16 * MS), "window passed: now");
        assertNotNull(q.tryDispatch(16 * MS, NO_EXPIRY));
        q.offer("c", FAR, 17 * MS);
        assertEquals(Long.MAX_VALUE, q.nextDispatchTime(100 * MS), "in flight");
    }

    @Test
    void nextDispatchTimeIsNowWithoutDelayedBatching() {
        BatchQueue<String> q = queue(4, 0, 10);
        q.offer("a", FAR, 0);
        assertEquals(7, q.nextDispatchTime(7));
    }

    @Test
    void nextDispatchTimeSaturatesInsteadOfOverflowing() {
        BatchQueue<String> q = queue(4, Long.MAX_VALUE, 10);
        q.offer("a", Long.MAX_VALUE, 10);
        assertEquals(Long.MAX_VALUE, q.nextDispatchTime(10));
    }

    @Test
    void atMostOneBatchInFlight() {
        BatchQueue<String> q = queue(2, 0, 10);
        for (int i = 0; i < 6; i++) {
            q.offer("t" + i, FAR, 0);
        }
        Batch<String> b1 = q.tryDispatch(0, NO_EXPIRY);
        assertTrue(q.inFlight());
        assertNull(q.tryDispatch(1, NO_EXPIRY));
        assertEquals(Long.MAX_VALUE, q.nextDispatchTime(1));
        q.complete(b1, 2);
        assertFalse(q.inFlight());
        Batch<String> b2 = q.tryDispatch(2, NO_EXPIRY);
        assertEquals(List.of("t2", "t3"), b2.items());
        q.fail(b2, 3);
        assertEquals(List.of("t4", "t5"), q.tryDispatch(3, NO_EXPIRY).items());
    }

    @Test
    void expiredTasksWaitWhileBatchInFlight() {
        BatchQueue<String> q = queue(1, 0, 10);
        q.offer("a", FAR, 0);
        q.offer("b", 5 * MS, 0);
        Batch<String> b = q.tryDispatch(0, NO_EXPIRY);
        assertEquals(List.of("b"), b.items());
        List<String> expired = new ArrayList<>();
        q.offer("c", 6 * MS, 0);
        assertNull(q.tryDispatch(10 * MS, expired::add));
        assertTrue(expired.isEmpty(), "nothing is touched while a batch is in flight");
        q.complete(b, 10 * MS);
        assertEquals(List.of("a"), q.tryDispatch(10 * MS, expired::add).items());
        assertEquals(List.of("c"), expired);
    }

    @Test
    void completeFeedsLatencyToPolicyAndFailDoesNot() {
        RecordingPolicy p = new RecordingPolicy(2);
        BatchQueue<String> q = new BatchQueue<>(p, 0, 10);
        q.offer("a", FAR, 0);
        q.offer("b", FAR, 0);
        q.offer("c", FAR, 0);
        Batch<String> b1 = q.tryDispatch(5 * MS, NO_EXPIRY);
        q.complete(b1, 12 * MS);
        assertEquals(1, p.feedback.size());
        assertEquals(2, p.feedback.get(0)[0]);
        assertEquals(7 * MS, p.feedback.get(0)[1]);
        Batch<String> b2 = q.tryDispatch(12 * MS, NO_EXPIRY);
        q.fail(b2, 30 * MS);
        assertEquals(1, p.feedback.size());
        assertFalse(q.inFlight());
    }

    @Test
    void aLatencyMeasuredElsewhereIsWhatThePolicyLearns() {
        RecordingPolicy p = new RecordingPolicy(2);
        BatchQueue<String> q = new BatchQueue<>(p, 0, 10);
        q.offer("a", FAR, 0);
        Batch<String> b = q.tryDispatch(5 * MS, NO_EXPIRY);
        q.complete(b, 40 * MS, 3 * MS); // e.g. the container's service time, not the 35 ms round trip
        assertEquals(3 * MS, p.feedback.get(0)[1]);
        assertFalse(q.inFlight());
    }

    @Test
    void latencyIsClampedAtZero() {
        RecordingPolicy p = new RecordingPolicy(2);
        BatchQueue<String> q = new BatchQueue<>(p, 0, 10);
        q.offer("a", FAR, 0);
        Batch<String> b = q.tryDispatch(10, NO_EXPIRY);
        q.complete(b, 5);
        assertEquals(0, p.feedback.get(0)[1]);
    }

    @Test
    void staleOrDuplicateCompletionIsIgnored() {
        RecordingPolicy p = new RecordingPolicy(1);
        BatchQueue<String> q = new BatchQueue<>(p, 0, 10);
        q.offer("a", FAR, 0);
        q.offer("b", FAR, 0);
        Batch<String> b1 = q.tryDispatch(0, NO_EXPIRY);
        q.fail(b1, 1); // e.g. timeout
        Batch<String> b2 = q.tryDispatch(1, NO_EXPIRY);
        q.complete(b1, 2); // late reply of the failed batch
        assertTrue(q.inFlight(), "stale completion must not free the slot of b2");
        assertTrue(p.feedback.isEmpty());
        // A value-equal but distinct batch is not the in-flight one either.
        q.complete(new Batch<>(b2.items(), b2.dispatchedAt()), 3);
        assertTrue(q.inFlight());
        q.complete(b2, 3);
        q.complete(b2, 4);
        assertFalse(q.inFlight());
        assertEquals(1, p.feedback.size());
    }

    @Test
    void nextBatchUsesUpdatedPolicySize() {
        AimdBatchingPolicy aimd = new AimdBatchingPolicy(10 * MS, 2, 1, 0.9, 100);
        BatchQueue<String> q = new BatchQueue<>(aimd, 0, 100);
        for (int i = 0; i < 10; i++) {
            q.offer("t" + i, FAR, 0);
        }
        Batch<String> b1 = q.tryDispatch(0, NO_EXPIRY);
        assertEquals(2, b1.size());
        q.complete(b1, MS); // full batch within SLO: max 2 -> 3
        assertEquals(3, q.tryDispatch(MS, NO_EXPIRY).size());
    }

    @Test
    void drainRemovesQueuedTasksInDeadlineOrderAndKeepsInFlight() {
        BatchQueue<String> q = queue(1, 0, 10);
        q.offer("x", 1, 0);
        Batch<String> b = q.tryDispatch(0, NO_EXPIRY);
        q.offer("c", 30, 0);
        q.offer("a", 10, 0);
        q.offer("b", 20, 0);
        assertEquals(4, q.load());
        assertEquals(List.of("a", "b", "c"), q.drain());
        assertEquals(0, q.size());
        assertEquals(1, q.load());
        assertTrue(q.inFlight());
        assertTrue(q.drain().isEmpty());
        q.complete(b, 1);
        assertEquals(Long.MAX_VALUE, q.nextDispatchTime(1));
        // Usable after draining.
        q.offer("d", FAR, 2);
        assertEquals(List.of("d"), q.tryDispatch(2, NO_EXPIRY).items());
    }

    @Test
    void loadCountsQueuedAndInFlight() {
        BatchQueue<String> q = queue(2, 0, 10);
        assertEquals(0, q.load());
        q.offer("a", FAR, 0);
        q.offer("b", FAR, 0);
        q.offer("c", FAR, 0);
        assertEquals(3, q.load());
        assertEquals(3, q.size());
        Batch<String> b = q.tryDispatch(0, NO_EXPIRY);
        assertEquals(3, q.load());
        assertEquals(1, q.size());
        q.complete(b, 1);
        assertEquals(1, q.load());
    }

    @Test
    void exposesPolicyAndConfiguration() {
        FixedBatchingPolicy p = new FixedBatchingPolicy(3);
        BatchQueue<String> q = new BatchQueue<>(p, 7, 9);
        assertSame(p, q.policy());
        assertEquals(7, q.batchWaitNanos());
        assertEquals(9, q.capacity());
    }

    @Test
    void validatesArguments() {
        FixedBatchingPolicy p = new FixedBatchingPolicy(1);
        assertThrows(NullPointerException.class, () -> new BatchQueue<String>(null, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> new BatchQueue<String>(p, -1, 1));
        assertThrows(IllegalArgumentException.class, () -> new BatchQueue<String>(p, 0, 0));
        BatchQueue<String> q = new BatchQueue<>(p, 0, 1);
        assertThrows(NullPointerException.class, () -> q.offer(null, 1, 0));
        assertThrows(NullPointerException.class, () -> q.tryDispatch(0, null));
    }

    @Test
    void concurrentProducersAndDispatcherLoseNothing() throws InterruptedException {
        // Deterministic outcome despite real threads: every task is dispatched exactly once.
        int producers = 4;
        int perProducer = 20_000;
        BatchQueue<Integer> q = new BatchQueue<>(AimdBatchingPolicy.forSlo(Long.MAX_VALUE), 0,
                1_000_000);
        CountDownLatch start = new CountDownLatch(1);
        AtomicBoolean producing = new AtomicBoolean(true);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < producers; t++) {
            int base = t * perProducer;
            Thread th = new Thread(() -> {
                awaitQuietly(start);
                for (int i = 0; i < perProducer; i++) {
                    assertTrue(q.offer(base + i, Long.MAX_VALUE, 0));
                }
            });
            th.start();
            threads.add(th);
        }
        boolean[] seen = new boolean[producers * perProducer];
        int[] dispatched = {0};
        Thread dispatcher = new Thread(() -> {
            awaitQuietly(start);
            long now = 0;
            while (producing.get() || q.size() > 0) {
                Batch<Integer> b = q.tryDispatch(++now, t -> {
                    throw new AssertionError("no deadline can pass");
                });
                if (b != null) {
                    for (int v : b.items()) {
                        assertFalse(seen[v], "dispatched twice: " + v);
                        seen[v] = true;
                        dispatched[0]++;
                    }
                    q.complete(b, now);
                }
            }
        });
        dispatcher.start();
        start.countDown();
        for (Thread th : threads) {
            th.join();
        }
        producing.set(false);
        dispatcher.join();
        assertEquals(producers * perProducer, dispatched[0]);
        assertEquals(0, q.load());
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

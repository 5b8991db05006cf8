package io.servegate.core.batching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class AimdBatchingPolicyTest {

    private static final long SLO = 20_000_000L; // 20 ms

    private static AimdBatchingPolicy policy(int initial, int step, int ceiling) {
        return new AimdBatchingPolicy(SLO, initial, step, 0.9, ceiling);
    }

    @Test
    void forSloUsesClipperDefaults() {
        AimdBatchingPolicy p = AimdBatchingPolicy.forSlo(SLO);
        assertEquals(1, p.maxBatchSize());
        assertEquals(SLO, p.sloNanos());
        assertEquals(1, p.additiveStep());
        assertEquals(0.9, p.backoffFactor());
        assertEquals(1024, p.ceiling());
    }

    @Test
    void increasesByStepAfterFullBatchWithinSlo() {
        AimdBatchingPolicy p = policy(10, 3, 1024);
        p.onBatchCompleted(10, SLO - 1);
        assertEquals(13, p.maxBatchSize());
        p.onBatchCompleted(13, SLO); // latency == SLO still meets it
        assertEquals(16, p.maxBatchSize());
        p.onBatchCompleted(20, 0); // larger than max (max shrank meanwhile) counts as full
        assertEquals(19, p.maxBatchSize());
    }

    @Test
    void backsOffTenPercentWhenOverSlo() {
        AimdBatchingPolicy p = policy(100, 1, 1024);
        p.onBatchCompleted(100, SLO + 1);
        assertEquals(90, p.maxBatchSize());
        p.onBatchCompleted(90, SLO + 1);
        assertEquals(81, p.maxBatchSize());
        p.onBatchCompleted(81, SLO + 1);
        assertEquals(72, p.maxBatchSize()); // floor(72.9)
    }

    @Test
    void backOffAlwaysShrinksAboveOne() {
        // floor(n * 0.9) < n for every n >= 1, so small sizes still make progress downwards.
        AimdBatchingPolicy p = policy(5, 1, 1024);
        p.onBatchCompleted(5, SLO + 1);
        assertEquals(4, p.maxBatchSize()); // floor(4.5)
        p.onBatchCompleted(4, SLO + 1);
        assertEquals(3, p.maxBatchSize()); // floor(3.6)
    }

    @Test
    void partialBatchWithinSloDoesNotIncrease() {
        AimdBatchingPolicy p = policy(10, 1, 1024);
        p.onBatchCompleted(9, 1);
        p.onBatchCompleted(1, 1);
        assertEquals(10, p.maxBatchSize());
    }

    @Test
    void partialBatchOverSloStillBacksOff() {
        AimdBatchingPolicy p = policy(10, 1, 1024);
        p.onBatchCompleted(3, SLO * 2);
        assertEquals(9, p.maxBatchSize());
    }

    @Test
    void neverBelowOne() {
        AimdBatchingPolicy p = policy(2, 1, 1024);
        for (int i = 0; i < 5; i++) {
            p.onBatchCompleted(1, Long.MAX_VALUE);
            assertEquals(1, p.maxBatchSize());
        }
        // and recovers from the floor
        p.onBatchCompleted(1, 0);
        assertEquals(2, p.maxBatchSize());
    }

    @Test
    void cappedAtCeiling() {
        AimdBatchingPolicy p = policy(8, 5, 10);
        p.onBatchCompleted(8, 0);
        assertEquals(10, p.maxBatchSize());
        p.onBatchCompleted(10, 0);
        assertEquals(10, p.maxBatchSize());
    }

    @Test
    void hugeStepDoesNotOverflow() {
        AimdBatchingPolicy p = new AimdBatchingPolicy(SLO, 5, Integer.MAX_VALUE, 0.9,
                Integer.MAX_VALUE);
        p.onBatchCompleted(5, 0);
        assertEquals(Integer.MAX_VALUE, p.maxBatchSize());
    }

    @Test
    void sawToothAroundOptimumForLinearProfile() {
        // latency(b) = 5 ms + 0.5 ms * b; b* = 30. From 1 the max climbs to 31, misses, backs
        // off to floor(27.9) = 27 and then cycles 27..31.
        AimdBatchingPolicy p = AimdBatchingPolicy.forSlo(SLO);
        List<Integer> sizes = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            int b = p.maxBatchSize();
            sizes.add(b);
            p.onBatchCompleted(b, 5_000_000L + 500_000L * b);
        }
        assertEquals(List.of(27, 28, 29, 30, 31, 27, 28, 29, 30, 31), sizes.subList(31, 41));
    }

    @Test
    void validatesConstructorArguments() {
        assertThrows(IllegalArgumentException.class, () -> new AimdBatchingPolicy(0, 1, 1, 0.9, 10));
        assertThrows(IllegalArgumentException.class, () -> new AimdBatchingPolicy(-1, 1, 1, 0.9, 10));
        assertThrows(IllegalArgumentException.class, () -> new AimdBatchingPolicy(SLO, 0, 1, 0.9, 10));
        assertThrows(IllegalArgumentException.class, () -> new AimdBatchingPolicy(SLO, 11, 1, 0.9, 10));
        assertThrows(IllegalArgumentException.class, () -> new AimdBatchingPolicy(SLO, 1, 0, 0.9, 10));
        assertThrows(IllegalArgumentException.class, () -> new AimdBatchingPolicy(SLO, 1, 1, 0.0, 10));
        assertThrows(IllegalArgumentException.class, () -> new AimdBatchingPolicy(SLO, 1, 1, 1.0, 10));
        assertThrows(IllegalArgumentException.class, () -> new AimdBatchingPolicy(SLO, 1, 1, Double.NaN, 10));
        assertThrows(IllegalArgumentException.class, () -> new AimdBatchingPolicy(SLO, 1, 1, 0.9, 0));
        assertThrows(IllegalArgumentException.class, () -> AimdBatchingPolicy.forSlo(0));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new AimdBatchingPolicy(SLO, 1, 1, 1.5, 10));
        assertTrue(e.getMessage().contains("backoffFactor"), e.getMessage());
    }

    @Test
    void validatesFeedbackArguments() {
        AimdBatchingPolicy p = policy(4, 1, 10);
        assertThrows(IllegalArgumentException.class, () -> p.onBatchCompleted(0, 1));
        assertThrows(IllegalArgumentException.class, () -> p.onBatchCompleted(1, -1));
        assertEquals(4, p.maxBatchSize());
    }

    @Test
    void concurrentIncreasesAreNotLost() throws InterruptedException {
        // Every sample reports a batch larger than any reachable max, so each one must add a
        // step; a lost update would leave the size short.
        int threads = 4;
        int perThread = 5_000;
        AimdBatchingPolicy p = new AimdBatchingPolicy(SLO, 1, 1, 0.9, 1_000_000);
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    p.onBatchCompleted(Integer.MAX_VALUE, 0);
                }
            });
            w.start();
            workers.add(w);
        }
        start.countDown();
        for (Thread w : workers) {
            w.join();
        }
        assertEquals(1 + threads * perThread, p.maxBatchSize());
    }
}

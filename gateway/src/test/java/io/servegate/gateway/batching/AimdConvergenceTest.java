package io.servegate.gateway.batching;

import io.servegate.core.batching.AimdBatchingPolicy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Virtual-time discrete-event check that AIMD (§4.3.1) finds the optimal batch size of an
 * emulated container whose batch of {@code b} takes {@code β + α·b}, under open-loop Poisson
 * overload, and that the queue never sends a task after its deadline.
 */
class AimdConvergenceTest {

    private static final long MS = 1_000_000L;
    private static final long SLO = 20 * MS;
    private static final long BETA = 5 * MS;
    private static final long ALPHA = MS / 2;
    private static final long DURATION = 20_000 * MS;
    private static final double OVERLOAD_QPS = 4_000; // capacity at b* is 30 / 20 ms = 1500 qps
    private static final long SEED = 42L;

    /** Batch service time of the emulated container, possibly changing over virtual time. */
    private interface LatencyProfile {
        long serviceNanos(int batchSize, long now);
    }

    private record Task(long arrival, long deadline) {
    }

    private record BatchRecord(long dispatchedAt, int size, int maxAtDispatch, long latency) {
    }

    private static final class Run {
        final List<BatchRecord> batches = new ArrayList<>();
        long offered;
        long expired;
        long lastExpiryAt = -1;
        long dispatchedTasks;
        long dispatchedAtOrAfterDeadline;
        int leftInQueue;

        List<BatchRecord> since(long t) {
            return batches.stream().filter(b -> b.dispatchedAt() >= t).toList();
        }
    }

    /** One replica, one in-flight batch, Poisson arrivals; events in time order. */
    private static Run simulate(LatencyProfile profile, double qps, long batchWait) {
        Random rnd = new Random(SEED);
        BatchQueue<Task> queue = new BatchQueue<>(AimdBatchingPolicy.forSlo(SLO), batchWait,
                1_000_000);
        Run run = new Run();
        long now = 0;
        long nextArrival = interArrival(rnd, qps);
        long completionAt = Long.MAX_VALUE;
        Batch<Task> inFlight = null;
        long steps = 0;
        while (true) {
            long t = Math.min(Math.min(nextArrival, completionAt), queue.nextDispatchTime(now));
            if (t > DURATION) {
                break;
            }
            assertTrue(++steps < 10_000_000, "event loop makes no progress");
            now = t;
            if (completionAt == now) {
                queue.complete(inFlight, now);
                inFlight = null;
                completionAt = Long.MAX_VALUE;
            }
            if (nextArrival == now) {
                assertTrue(queue.offer(new Task(now, now + SLO), now + SLO, now));
                run.offered++;
                nextArrival = now + interArrival(rnd, qps);
            }
            int max = queue.policy().maxBatchSize();
            long at = now;
            Batch<Task> batch = queue.tryDispatch(now, task -> {
                run.expired++;
                run.lastExpiryAt = at;
            });
            if (batch != null) {
                for (Task task : batch.items()) {
                    if (task.deadline() <= now) {
                        run.dispatchedAtOrAfterDeadline++;
                    }
                }
                run.dispatchedTasks += batch.size();
                long service = profile.serviceNanos(batch.size(), now);
                run.batches.add(new BatchRecord(now, batch.size(), max, service));
                inFlight = batch;
                completionAt = now + service;
            }
        }
        run.leftInQueue = queue.size(); // an in-flight batch is already in dispatchedTasks
        return run;
    }

    private static long interArrival(Random rnd, double qps) {
        double seconds = -Math.log(1.0 - rnd.nextDouble()) / qps;
        return Math.round(seconds * 1e9);
    }

    private static double meanMax(List<BatchRecord> batches) {
        return batches.stream().mapToInt(BatchRecord::maxAtDispatch).average().orElseThrow();
    }

    @Test
    void settlesAtOptimalBatchSizeForLinearProfile() {
        Run run = simulate((b, now) -> BETA + ALPHA * b, OVERLOAD_QPS, 0);
        int bStar = (int) ((SLO - BETA) / ALPHA);
        assertEquals(30, bStar);

        List<BatchRecord> steady = run.since(DURATION / 2);
        assertTrue(steady.size() > 400, "too few batches: " + steady.size());

        // Overloaded: every batch is full, so each sample is informative for AIMD.
        assertTrue(steady.stream().allMatch(b -> b.size() == b.maxAtDispatch()));

        double mean = meanMax(steady);
        assertTrue(Math.abs(mean - bStar) <= 0.15 * bStar,
                "steady-state mean max batch size " + mean + " not within 15% of " + bStar);

        // Saw-tooth 27,28,29,30,31 -> back-off: one batch in five probes b*+1 and misses the
        // SLO, by exactly one step's worth of latency (α). That probing is inherent to AIMD.
        long over = steady.stream().filter(b -> b.latency() > SLO).count();
        double overFraction = (double) over / steady.size();
        assertTrue(overFraction > 0, "AIMD must keep probing above the SLO");
        assertTrue(overFraction <= 0.2 + 0.01, "fraction over SLO " + overFraction);
        long worst = steady.stream().mapToLong(BatchRecord::latency).max().orElseThrow();
        assertTrue(worst <= SLO + ALPHA, "worst steady-state batch latency " + worst);

        // Expiry rule: nothing is sent at or after its deadline; overload makes tasks expire.
        assertEquals(0, run.dispatchedAtOrAfterDeadline);
        assertTrue(run.expired > 0);
        assertEquals(run.offered, run.dispatchedTasks + run.expired + run.leftInQueue);
    }

    @Test
    void readaptsWhenContainerSlowsDown() {
        // α doubles half-way (e.g. a noisy neighbour): b* drops from 30 to floor(15 / 1.0) = 15.
        long change = DURATION / 2;
        Run run = simulate((b, now) -> BETA + (now < change ? ALPHA : 2 * ALPHA) * b,
                OVERLOAD_QPS, 0);
        double before = meanMax(run.batches.stream()
                .filter(b -> b.dispatchedAt() >= change / 2 && b.dispatchedAt() < change)
                .toList());
        double after = meanMax(run.since(change + DURATION / 4));
        assertTrue(Math.abs(before - 30) <= 0.15 * 30, "before change: " + before);
        assertTrue(Math.abs(after - 15) <= 0.15 * 15, "after change: " + after);
        assertEquals(0, run.dispatchedAtOrAfterDeadline);
    }

    @Test
    void moderateLoadWithDelayedBatchingMeetsSloWithoutDrops() {
        // 1000 qps is below capacity: once AIMD has ramped up from size 1 (a few tasks expire
        // meanwhile), batches are mostly partial, AIMD stops growing near the size that keeps
        // up, and with a 2 ms batching window nothing expires or misses the SLO.
        Run run = simulate((b, now) -> BETA + ALPHA * b, 1_000, 2 * MS);
        assertTrue(run.lastExpiryAt < 1_000 * MS, "expiry after warm-up at " + run.lastExpiryAt);
        assertEquals(0, run.dispatchedAtOrAfterDeadline);
        assertTrue(run.since(1_000 * MS).stream().allMatch(b -> b.latency() <= SLO));
        double meanSize = run.since(DURATION / 2).stream().mapToInt(BatchRecord::size)
                .average().orElseThrow();
        assertTrue(meanSize > 2, "delayed batching should form real batches: " + meanSize);
        assertEquals(run.offered, run.dispatchedTasks + run.expired + run.leftInQueue);
    }
}

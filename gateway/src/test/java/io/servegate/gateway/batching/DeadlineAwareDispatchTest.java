package io.servegate.gateway.batching;

import io.servegate.core.batching.AimdBatchingPolicy;
import io.servegate.core.batching.BatchLatencyProfile;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import java.util.function.LongBinaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Virtual-time simulation of one replica under open-loop Poisson load, comparing Clipper's
 * dispatch with Clockwork's deadline-aware rule on the same arrivals: a prediction counts only if
 * its batch returns by the task's deadline (else the caller answered with the default at the
 * deadline), and a task dropped as unreachable is answered with the default when dropped.
 */
class DeadlineAwareDispatchTest {

    private static final long MS = 1_000_000L;
    private static final long SLO = 20 * MS;
    private static final long BETA = 5 * MS;
    private static final long ALPHA = MS / 2;
    private static final long DURATION = 20_000 * MS;
    private static final long WARM_UP = 2_000 * MS;

    private record Task(long arrival, long deadline) {
    }

    /** Outcomes of the tasks that arrived after the warm-up. */
    private static final class Outcome {
        long offered;
        long onTime;       // predicted by the deadline
        long late;         // sent, but the batch returned after the deadline
        long droppedEarly; // answered with the default before the deadline
        long droppedAtDeadline;
        long maxBatch;
        long leftOver;     // queued or in flight when the run ends

        @Override
        public String toString() {
            return "offered " + offered + " onTime " + onTime + " late " + late + " early " + droppedEarly
                    + " atDeadline " + droppedAtDeadline + " maxBatch " + maxBatch + " goodput " + goodput();
        }

        double goodput() {
            return (double) onTime / offered;
        }
    }

    private static Outcome simulate(boolean deadlineAware, double qps, LongBinaryOperator service) {
        Random rnd = new Random(7);
        BatchLatencyProfile profile = deadlineAware ? new BatchLatencyProfile(10, 5_000 * MS) : null;
        BatchQueue<Task> queue = new BatchQueue<>(AimdBatchingPolicy.forSlo(SLO), 0, 1_000_000, profile);
        Outcome out = new Outcome();
        long now = 0;
        long nextArrival = gap(rnd, qps);
        long completionAt = Long.MAX_VALUE;
        Batch<Task> inFlight = null;
        while (true) {
            long t = Math.min(Math.min(nextArrival, completionAt), queue.nextDispatchTime(now));
            if (t > DURATION) {
                out.leftOver = queue.size() + (inFlight == null ? 0 : inFlight.size());
                return out;
            }
            now = t;
            if (completionAt == now) {
                queue.complete(inFlight, now);
                for (Task task : inFlight.items()) {
                    if (task.arrival() >= WARM_UP) {
                        if (now <= task.deadline()) {
                            out.onTime++;
                        } else {
                            out.late++;
                        }
                    }
                }
                inFlight = null;
                completionAt = Long.MAX_VALUE;
            }
            if (nextArrival == now) {
                queue.offer(new Task(now, now + SLO), now + SLO, now);
                if (now >= WARM_UP) {
                    out.offered++;
                }
                nextArrival = now + gap(rnd, qps);
            }
            long at = now;
            Batch<Task> batch = queue.tryDispatch(now, task -> {
                if (task.arrival() >= WARM_UP) {
                    if (at < task.deadline()) {
                        out.droppedEarly++;
                    } else {
                        out.droppedAtDeadline++;
                    }
                }
            });
            if (batch != null) {
                inFlight = batch;
                completionAt = now + service.applyAsLong(batch.size(), now);
                if (now >= WARM_UP) {
                    out.maxBatch = Math.max(out.maxBatch, batch.size());
                }
            }
        }
    }

    private static long gap(Random rnd, double qps) {
        return Math.round(-Math.log(1.0 - rnd.nextDouble()) / qps * 1e9);
    }

    @Test
    void overloadKeepsGoodputWhereClipperDispatchAnswersOnlyDefaults() {
        // 2,000 req/s is 1.33x the capacity at b* = 30 (30 per 20 ms).
        LongBinaryOperator linear = (b, now) -> BETA + ALPHA * b;
        Outcome clipper = simulate(false, 2_000, linear);
        Outcome aware = simulate(true, 2_000, linear);

        // Clipper: AIMD sizes batches so that a batch alone fits the SLO; a query that waited for
        // the batch in flight cannot make it, so under overload almost nothing is on time.
        assertTrue(clipper.goodput() < 0.05, "clipper: " + clipper);

        // Deadline-aware: nothing sent returns late, and most queries are predicted in time.
        assertEquals(0, aware.late, "batches returned after a deadline");
        // (seed 7: 59 %; the bound is 1 / 1.33 = 75 % at b*, but a batch that must fit the slack
        // of queries that already waited is smaller than b*)
        assertTrue(aware.goodput() > 0.5, "deadline-aware: " + aware);
        assertTrue(aware.droppedEarly > 0 && aware.droppedAtDeadline == 0,
                "the unreachable are answered at once: early " + aware.droppedEarly
                        + ", at deadline " + aware.droppedAtDeadline);
        assertEquals(aware.offered, aware.onTime + aware.droppedEarly + aware.droppedAtDeadline + aware.leftOver,
                "every query is accounted for");
    }

    @Test
    void belowCapacityNothingIsLateAndLittleIsDropped() {
        // 800 req/s is about half the capacity at b*. Clipper's dispatch still returns some
        // batches late (AIMD probes above the SLO, and queries wait for the batch in flight).
        LongBinaryOperator linear = (b, now) -> BETA + ALPHA * b;
        Outcome clipper = simulate(false, 800, linear);
        Outcome aware = simulate(true, 800, linear);
        assertTrue(clipper.late > 0, "clipper: " + clipper);
        assertEquals(0, aware.late, "deadline-aware: " + aware);
        assertTrue(aware.goodput() > 0.98 && aware.goodput() >= clipper.goodput(), "deadline-aware: " + aware
                + "; clipper: " + clipper);
    }

    @Test
    void aContainerThatWasSlowIsServedAgainAsSoonAsItIsFast() {
        // 10x slower for two seconds: nothing can make a 20 ms SLO (a batch of one takes 55 ms),
        // and the profile says so for 2 s after the last slow samples. Probes (the task with the
        // most slack, sent alone while nothing else can make it) measure the recovery at once.
        long slowFrom = 5_000 * MS;
        long slowUntil = 7_000 * MS;
        LongBinaryOperator flaky = (b, now) -> (now >= slowFrom && now < slowUntil ? 10 : 1) * (BETA + ALPHA * b);
        Outcome out = simulate(true, 500, flaky);
        double slowShare = (double) (slowUntil - slowFrom) / (DURATION - WARM_UP);
        assertTrue(out.goodput() > 1 - slowShare - 0.02, "goodput " + out + ", slow share " + slowShare);
        assertTrue(out.goodput() < 1 - slowShare / 2, "the slow period must cost something: " + out);
        // late: the batches sent before the profile's median believed the slowdown (half a
        // window of slow samples per size), then the probes, one at a time: under 1 % of queries
        assertTrue(out.late < out.offered / 100, "late: " + out);
    }
}

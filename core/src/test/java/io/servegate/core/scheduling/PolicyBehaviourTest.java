package io.servegate.core.scheduling;

import static io.servegate.core.scheduling.VirtualCluster.MS;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Each policy's own rules, on hand-made situations with hand-computed answers. */
class PolicyBehaviourTest {

    private static final long SLO = 20 * MS;
    private static final long T0 = 1_000 * MS;

    /**
     * A replica with ℓ(b) = 5 + 0.5·b ms and no transport overhead, which has seen about 632
     * queries per second (1,000 in the last second, decayed), so Symphony's fill target β·λ is
     * ceil(0.005 × 632) = 4. The queries it saw arrived while it was unavailable.
     */
    private static VirtualCluster<ModelScheduler<Integer>> symphonyAtT0() {
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.SYMPHONY, SLO), 1)
                .replica("a", 5 * MS, MS / 2, 0).profiled("a", 64);
        c.scheduler.setAvailable("a", false, 0);
        for (int i = 0; i < 1_000; i++) {
            c.now = i * MS;
            c.submit(c.now + SLO);
        }
        c.now = T0;
        c.scheduler.setAvailable("a", true, T0);
        return c;
    }

    @Test
    void symphonyDefersOneQueryUntilSchedAtAndSendsItThen() {
        var c = symphonyAtT0();
        c.submit(T0 + SLO);
        // sched_at = dl − ℓ(2) = T0 + 20 − 6 ms
        assertThat(c.batches).isEmpty();
        assertThat(c.wakeRequests).contains(T0 + 14 * MS);
        c.runUntil(T0 + 14 * MS - 1);
        assertThat(c.batches).isEmpty();
        c.runUntil(T0 + 14 * MS);
        assertThat(c.batches).hasSize(1);
        assertThat(c.batches.get(0).sentAt()).isEqualTo(T0 + 14 * MS);
        assertThat(c.batches.get(0).predictedFinish()).isEqualTo(T0 + 19_500_000L);
    }

    @Test
    void symphonyGrowsTheCandidateAndMovesSchedAtEarlier() {
        var c = symphonyAtT0();
        c.submit(T0 + SLO);
        c.runUntil(T0 + 10 * MS);
        c.submit(T0 + 10 * MS + SLO);
        // two queries, earliest deadline T0 + 20: sched_at = T0 + 20 − ℓ(3) = T0 + 13.5 ms
        assertThat(c.wakeRequests).contains(T0 + 13_500_000L);
        c.runUntil(T0 + 13_500_000L - 1);
        assertThat(c.batches).isEmpty();
        c.runUntil(T0 + 13_500_000L);
        assertThat(c.batches).singleElement().satisfies(b -> {
            assertThat(b.size()).isEqualTo(2);
            assertThat(b.sentAt()).isEqualTo(T0 + 13_500_000L);
        });
    }

    @Test
    void symphonySendsAtOnceWhenTheCandidateHoldsWhatArrivesDuringTheFixedCost() {
        var c = symphonyAtT0();
        for (int i = 0; i < 3; i++) {
            c.submit(T0 + SLO);
        }
        assertThat(c.batches).isEmpty();
        c.submit(T0 + SLO);
        assertThat(c.batches).singleElement().satisfies(b -> {
            assertThat(b.size()).isEqualTo(4);
            assertThat(b.sentAt()).isEqualTo(T0);
        });
    }

    @Test
    void symphonyPrunesTheStalestQueriesSoThatTheFreshestFillALargeBatch() {
        // an SLO that covers the fresh queries' deadlines: none is one of an app that could wait
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.SYMPHONY, 40 * MS), 1)
                .replica("a", 5 * MS, MS / 2, 0).profiled("a", 64);
        c.submit(1_000 * MS); // runs alone until 5.5 ms
        c.runUntil(MS);
        // two stale queries due at 12 ms, then twenty fresh ones due at 40 ms
        c.submit(12 * MS);
        c.submit(12 * MS);
        for (int i = 0; i < 20; i++) {
            c.submit(40 * MS);
        }
        c.drain();
        // from 5.5 ms a batch of 20 answers at 20.5 ms, too late for the stale two, which alone
        // would have taken the replica for a batch of at most 13 of the fresh: they are pruned
        assertThat(c.rejected).containsEntry(RejectReason.INFEASIBLE, 2);
        assertThat(c.batches.get(1).size()).isEqualTo(20);
        assertThat(c.good()).isEqualTo(21);
    }

    @Test
    void clockworkRejectsAQueryThatCannotMakeItEvenAloneAtOnce() {
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.CLOCKWORK, SLO), 1)
                .replica("a", 5 * MS, MS / 2, 0).profiled("a", 8);
        c.submit(5 * MS); // ℓ(1) = 5.5 ms
        assertThat(c.rejected).containsEntry(RejectReason.INFEASIBLE, 1);
        assertThat(c.batches).isEmpty();
    }

    @Test
    void clockworkSendsTheLargestBatchOfTheEarliestDeadlinesThatFinishesInTime() {
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.CLOCKWORK, SLO), 1)
                .replica("a", 5 * MS, MS / 2, 0).profiled("a", 64);
        c.submit(1_000 * MS); // runs alone until 5.5 ms
        c.runUntil(MS);
        for (int i = 0; i < 10; i++) {
            c.submit(13 * MS + i);
        }
        c.runUntil(5_500_000L);
        // starts at 5.5 ms; the earliest deadline 13 ms leaves 7.5 ms: ℓ(5) = 7.5 ms
        assertThat(c.batches).hasSize(2);
        assertThat(c.batches.get(1).size()).isEqualTo(5);
        assertThat(c.batches.get(1).sentAt()).isEqualTo(5_500_000L);
    }

    @Test
    void clockworkQueuesTheNextBatchAheadByTheTransportOverhead() {
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.CLOCKWORK, 1_000 * MS), 1)
                .replica("a", 5 * MS, MS / 2, 2 * MS).profiled("a", 64);
        c.submit(1_000 * MS); // sent at 0, starts at 1 ms, finishes at 6.5 ms
        c.runUntil(MS);
        c.submit(1_000 * MS);
        assertThat(c.batches).hasSize(1);
        c.runUntil(4_500_000L - 1);
        assertThat(c.batches).hasSize(1);
        c.runUntil(4_500_000L);
        assertThat(c.batches).hasSize(2);
        assertThat(c.batches.get(1).predictedStart()).isEqualTo(6_500_000L);
    }

    @Test
    void clipperWithFixedSizeOneNeverBatches() {
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.CLIPPER, SLO).withBatchSizes(64, 1), 1)
                .replica("a", 5 * MS, MS / 2, 0);
        for (int i = 0; i < 5; i++) {
            c.submit(1_000 * MS);
        }
        c.drain();
        assertThat(c.batches).hasSize(5).allSatisfy(b -> assertThat(b.size()).isEqualTo(1));
    }

    @Test
    void clipperDelayedBatchingWaitsForTheOldestQueryUnlessTheBatchIsFull() {
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.CLIPPER, SLO)
                .withBatchSizes(64, 3).withBatchWait(2 * MS), 1).replica("a", 5 * MS, 0, 0);
        c.submit(1_000 * MS);
        c.runUntil(2 * MS - 1);
        assertThat(c.batches).isEmpty();
        c.runUntil(2 * MS);
        assertThat(c.batches).singleElement().satisfies(b -> assertThat(b.size()).isEqualTo(1));
        c.runUntil(10 * MS);
        c.submit(1_000 * MS);
        c.submit(1_000 * MS);
        c.submit(1_000 * MS);
        assertThat(c.batches).hasSize(2);
        assertThat(c.batches.get(1).size()).isEqualTo(3);
    }

    @Test
    void clipperDropsOnlyWhatHasExpired() {
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.CLIPPER, SLO).withBatchSizes(64, 1), 1)
                .replica("a", 50 * MS, 0, 0);
        c.submit(1_000 * MS);
        c.submit(10 * MS); // waits behind a 50 ms batch: expires in the queue
        c.drain();
        assertThat(c.rejected).containsEntry(RejectReason.DEADLINE, 1);
        assertThat(c.late()).isZero();
    }

    @Test
    void clipperAimdSettlesNearTheOptimalBatchSizeUnderOverload() {
        // b* = floor((SLO − β) / α) = 30
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.CLIPPER, SLO), 42)
                .replica("a", 5 * MS, MS / 2, 0).poisson(4_000, 20_000 * MS, SLO);
        c.drain();
        double recent = c.batches.subList(c.batches.size() - 200, c.batches.size()).stream()
                .mapToInt(Batch::size).average().orElse(0);
        assertThat(recent).isBetween(26.0, 32.0);
        assertThat(c.scheduler.lanes.get(0).replica.batching.maxBatchSize()).isBetween(26, 33);
    }

    @Test
    void clipperSendsEarliestDeadlinesFirstWithTiesInArrivalOrder() {
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.CLIPPER, SLO).withBatchSizes(64, 4), 1)
                .replica("a", 5 * MS, 0, 0);
        c.submit(1_000 * MS); // keeps the replica busy while the rest queue up
        int late = c.submit(300 * MS);
        int first = c.submit(100 * MS);
        int middle = c.submit(200 * MS);
        int second = c.submit(100 * MS);
        c.drain();
        assertThat(c.batches.get(1).queries()).extracting(Query::payload)
                .containsExactly(first, second, middle, late);
    }

    @Test
    void aReplicaThatWasSlowGetsLargeBatchesAgainOnceItIsFast() {
        for (PolicyKind policy : new PolicyKind[] {PolicyKind.CLOCKWORK, PolicyKind.SYMPHONY}) {
            var c = VirtualCluster.of(SchedulerConfig.of(policy, SLO), 9)
                    .replica("a", 5 * MS, MS / 2, MS / 2).profiled("a", 64)
                    .slow("a", 10, 2_000 * MS, 4_000 * MS)
                    .poisson(800, 12_000 * MS, SLO);
            c.drain();
            double after = c.batches.stream().filter(b -> b.sentAt() > 8_000 * MS).mapToInt(Batch::size)
                    .average().orElse(0);
            long goodAfter = java.util.stream.IntStream.range(0, c.submitted())
                    .filter(i -> c.deadlines.get(i) > 8_000 * MS + SLO && c.answeredAt.get(i) >= 0
                            && c.answeredAt.get(i) <= c.deadlines.get(i))
                    .count();
            long offeredAfter = c.deadlines.stream().filter(d -> d > 8_000 * MS + SLO).count();
            assertThat(after).as("%s mean batch after the slow spell", policy).isGreaterThan(3.0);
            assertThat((double) goodAfter / offeredAfter).as("%s goodput after the slow spell", policy)
                    .isGreaterThan(0.85);
        }
    }

    @Test
    void aLoweredBatchCapHoldsForTheQueuedQueriesAndLosesNone() {
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.CLIPPER, SLO).withBatchSizes(64, 64), 1)
                .replica("a", 5 * MS, 0, 0);
        c.submit(1_000 * MS); // keeps the replica busy while the rest queue up
        for (int i = 0; i < 20; i++) {
            c.submit(1_000 * MS);
        }
        c.scheduler.setMaxBatchSize(4, c.now);
        c.drain();
        assertThat(c.batches).hasSize(6);
        assertThat(c.batches.subList(1, 6)).allSatisfy(b -> assertThat(b.size()).isEqualTo(4));
        assertThat(c.scheduler.maxBatchSize("a")).isEqualTo(4);
        assertThat(c.late()).isZero();
    }

    @Test
    void aRaisedBatchCapIsUsedUpToTheProfiledSize() {
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.CLOCKWORK, 100 * MS).withBatchSizes(16, -1), 1)
                .replica("a", 5 * MS, MS / 2, 0).profiled("a", 16);
        c.scheduler.setMaxBatchSize(2, c.now);
        // twelve at once: the first goes alone, the rest queue behind it
        for (int i = 0; i < 12; i++) {
            c.submit(c.now + 1_000 * MS);
        }
        c.runUntil(c.now + 500 * MS);
        assertThat(c.batches).extracting(Batch::size).containsExactly(1, 2, 2, 2, 2, 2, 1);
        c.scheduler.setMaxBatchSize(16, c.now);
        c.batches.clear();
        for (int i = 0; i < 12; i++) {
            c.submit(c.now + 1_000 * MS);
        }
        c.runUntil(c.now + 500 * MS);
        assertThat(c.batches).extracting(Batch::size).contains(11).allMatch(size -> size <= 16);
        assertThat(c.batches.stream().mapToInt(Batch::size).sum()).isEqualTo(12);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> c.scheduler.setMaxBatchSize(17, c.now))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be in 1..16");
    }
}

package io.servegate.core.scheduling;

import static io.servegate.core.scheduling.VirtualCluster.MS;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** What every policy promises, checked in virtual time. */
class SchedulerGuaranteesTest {

    private static final long SLO = 20 * MS;

    @ParameterizedTest
    @EnumSource(PolicyKind.class)
    void noQueryIsLostOrAnsweredTwiceThroughFailuresAndARemovedReplica(PolicyKind policy) {
        var c = VirtualCluster.of(SchedulerConfig.of(policy, SLO), 7)
                .replica("a", 5 * MS, MS / 2, MS / 2)
                .replica("b", 5 * MS, MS / 2, MS / 2)
                .replica("c", 5 * MS, MS / 2, MS / 2)
                .failing("b", 0.2)
                .poisson(3_000, 5_000 * MS, SLO);
        c.kill("c", 2_500 * MS);
        c.drain();

        assertThat(c.submitted()).isGreaterThan(14_000);
        assertThat(c.outcomes).allSatisfy(n -> assertThat(n).as("times a query left the scheduler").isEqualTo(1));
        assertThat(c.scheduler.queued()).isZero();
        assertThat(c.failedBatches).as("failed batches, their queries retried or given up").isGreaterThan(20);
    }

    @ParameterizedTest
    @EnumSource(value = PolicyKind.class, names = {"CLOCKWORK", "SYMPHONY"})
    void withAnExactLatencyModelNoBatchIsSentThatIsPredictedToMissAMembersDeadline(PolicyKind policy) {
        for (double rate : new double[] {400, 900, 1_500, 4_000}) {
            var c = VirtualCluster.of(SchedulerConfig.of(policy, SLO), 11)
                    .replica("a", 5 * MS, MS / 2, MS)
                    .replica("b", 5 * MS, MS / 2, MS)
                    .profiled("a", 64)
                    .profiled("b", 64)
                    .poisson(rate, 3_000 * MS, SLO);
            c.drain();

            assertThat(c.predictedLate).as("batches predicted late at %s/s", rate).isZero();
            assertThat(c.late()).as("answers after their deadline at %s/s", rate).isZero();
            assertThat(c.outcomes).allSatisfy(n -> assertThat(n).isEqualTo(1));
        }
    }

    @ParameterizedTest
    @EnumSource(PolicyKind.class)
    void queriesWaitInTheModelsQueueAndGoToWhicheverReplicaIsFreeFirst(PolicyKind policy) {
        // two replicas, one ten times slower; both busy when the third query arrives
        var c = VirtualCluster.of(SchedulerConfig.of(policy, 1_000 * MS).withBatchSizes(1, 1), 3)
                .replica("fast", 5 * MS, 0, 0)
                .replica("slow", 50 * MS, 0, 0)
                .profiled("fast", 1)
                .profiled("slow", 1);
        c.submit(1_000 * MS);
        c.submit(1_000 * MS);
        assertThat(c.batches).extracting(Batch::replica).containsExactlyInAnyOrder("fast", "slow");
        int third = c.submit(1_000 * MS);

        assertThat(c.scheduler.queued()).as("bound to no replica while both are busy").isEqualTo(1);
        c.drain();
        Batch<Integer> last = c.batches.get(c.batches.size() - 1);
        assertThat(last.queries()).extracting(Query::payload).containsExactly(third);
        assertThat(last.replica()).isEqualTo("fast");
        assertThat(last.sentAt()).as("sent when 'fast' became free (or just before, by the overhead)")
                .isLessThanOrEqualTo(5 * MS);
    }

    @ParameterizedTest
    @EnumSource(PolicyKind.class)
    void withoutAvailableReplicasQueriesAreRejectedAtOnceAndQueuedOnesWhenTheLastOneGoes(PolicyKind policy) {
        var c = VirtualCluster.of(SchedulerConfig.of(policy, SLO), 1);
        c.submit(SLO);
        assertThat(c.rejected).containsEntry(RejectReason.NO_REPLICA, 1);

        c.replica("a", 5 * MS, 0, 0).profiled("a", 4);
        c.submit(SLO);
        c.submit(SLO);
        c.submit(SLO);
        assertThat(c.scheduler.queued()).isPositive();
        c.scheduler.setAvailable("a", false, c.now);
        assertThat(c.scheduler.queued()).isZero();
        assertThat(c.rejected.get(RejectReason.NO_REPLICA)).isGreaterThan(1);
    }

    @ParameterizedTest
    @EnumSource(PolicyKind.class)
    void aFullQueueRejectsAsOverloaded(PolicyKind policy) {
        var c = VirtualCluster.of(SchedulerConfig.of(policy, SLO).withQueueCapacity(2), 1)
                .replica("a", 5 * MS, 0, 0).profiled("a", 1);
        for (int i = 0; i < 10; i++) {
            c.submit(1_000 * MS);
        }
        assertThat(c.rejected.get(RejectReason.OVERLOADED)).isPositive();
        assertThat(c.scheduler.queued()).isLessThanOrEqualTo(2);
    }

    @ParameterizedTest
    @EnumSource(PolicyKind.class)
    void aRetriedQueryGoesBackToTheModelsQueueOnceAndAnotherReplicaServesIt(PolicyKind policy) {
        var c = VirtualCluster.of(SchedulerConfig.of(policy, 1_000 * MS).withBatchSizes(8, 1), 1)
                .replica("a", 5 * MS, 0, 0).replica("b", 5 * MS, 0, 0).profiled("a", 1).profiled("b", 1);
        int q = c.submit(1_000 * MS);
        Batch<Integer> first = c.batches.get(0);
        c.scheduler.setAvailable(first.replica(), false, c.now);
        List<Query<Integer>> giveUp = c.scheduler.batchFailed(first, first.queries(), c.now);

        assertThat(giveUp).isEmpty();
        Batch<Integer> retry = c.batches.get(1);
        assertThat(retry.queries()).extracting(Query::payload).containsExactly(q);
        assertThat(retry.replica()).isNotEqualTo(first.replica());
        assertThat(retry.queries().get(0).attempts()).isEqualTo(2);
        assertThat(c.scheduler.batchFailed(retry, retry.queries(), c.now)).as("no third attempt")
                .extracting(Query::payload).containsExactly(q);
    }

    @ParameterizedTest
    @EnumSource(PolicyKind.class)
    void aStaleOrDuplicateCompletionIsIgnored(PolicyKind policy) {
        var c = VirtualCluster.of(SchedulerConfig.of(policy, SLO), 1)
                .replica("a", 5 * MS, 0, 0).profiled("a", 1);
        c.submit(SLO);
        Batch<Integer> b = c.batches.get(0);
        c.scheduler.batchCompleted(b, 5 * MS, 5 * MS);
        long sent = c.scheduler.sentBatches();
        c.scheduler.batchCompleted(b, 5 * MS, 6 * MS);
        assertThat(c.scheduler.batchFailed(b, b.queries(), 7 * MS)).isEmpty();
        assertThat(c.scheduler.sentBatches()).isEqualTo(sent);
    }
}

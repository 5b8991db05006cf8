package io.servegate.core.scheduling;

import static io.servegate.core.scheduling.VirtualCluster.MS;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A model version moving from one scheduler to another (fleet members handing it on), in virtual
 * time: the scheduler that gives it up moves its queue and says how long its replicas still run
 * its batches; the one that takes it over plans those replicas busy until then.
 */
class HandOverTest {

    private static final long SLO = 50 * MS;

    /** One replica of ℓ(b) = 10 + 1·b ms and no transport overhead, profiled. */
    private static VirtualCluster<ModelScheduler<Integer>> cluster(PolicyKind policy) {
        return VirtualCluster.of(SchedulerConfig.of(policy, SLO), 1).replica("a", 10 * MS, MS, 0).profiled("a", 64);
    }

    @Test
    void handingOverMovesTheQueueAndSaysHowLongTheReplicaStillRunsWhatWasSent() {
        var c = cluster(PolicyKind.ADAPTIVE);
        c.submit(SLO); // sent at once: the replica runs it until 11 ms
        c.runUntil(MS);
        for (int i = 0; i < 3; i++) {
            c.submit(MS + SLO); // queued behind it
        }
        assertThat(c.batches).hasSize(1);

        Map<String, Long> backlog = c.scheduler.handOver(MS);

        assertThat(backlog).containsExactly(Map.entry("a", 10 * MS));
        assertThat(c.rejected).containsExactly(Map.entry(RejectReason.MOVED, 3));
        assertThat(c.scheduler.queued()).isZero();
        assertThat(c.scheduler.bad()).as("moved on, not answered badly").isZero();
        c.drain();
        assertThat(c.batches).hasSize(1);
        assertThat(c.good()).isEqualTo(1); // what was sent is answered
    }

    @Test
    void aReplicaWithNothingSentHasNoBacklog() {
        var c = cluster(PolicyKind.ADAPTIVE);
        assertThat(c.scheduler.handOver(0)).containsExactly(Map.entry("a", 0L));
    }

    @ParameterizedTest
    @EnumSource(PolicyKind.class)
    void theSchedulerThatTakesOverSendsItsFirstBatchOnlyAsTheReplicaComesFree(PolicyKind policy) {
        var c = cluster(policy);
        c.scheduler.busyFor("a", 20 * MS, 0);
        c.submit(SLO);
        c.runUntil(20 * MS - 1);
        assertThat(c.batches).isEmpty();

        c.runUntil(20 * MS);

        assertThat(c.batches).singleElement().satisfies(b -> {
            assertThat(b.sentAt()).isEqualTo(20 * MS);
            assertThat(b.predictedStart()).isGreaterThanOrEqualTo(20 * MS);
        });
        c.drain();
        assertThat(c.good()).isEqualTo(1);
    }

    @Test
    void aQueryThatCannotWaitForTheLastOwnersBatchesIsNotSentBehindThem() {
        var c = cluster(PolicyKind.ADAPTIVE);
        c.scheduler.busyFor("a", 45 * MS, 0);
        c.submit(SLO); // 45 + 11 ms > 50 ms
        c.drain();

        assertThat(c.rejected).containsExactly(Map.entry(RejectReason.INFEASIBLE, 1));
        assertThat(c.batches).isEmpty();
    }

    @Test
    void anUnknownReplicaOrNoBacklogChangesNothing() {
        var c = cluster(PolicyKind.ADAPTIVE);
        c.scheduler.busyFor("b", 20 * MS, 0);
        c.scheduler.busyFor("a", 0, 0);
        c.submit(SLO);
        assertThat(c.batches).singleElement().satisfies(b -> assertThat(b.sentAt()).isZero());
    }
}

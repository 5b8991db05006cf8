package io.servegate.core.scheduling;

import static io.servegate.core.scheduling.VirtualCluster.MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Loads, evictions and cold-start-aware planning over multi-model replicas, in virtual time. */
class MultiModelSchedulerTest {

    private static final long T = 1_000 * MS;
    private static final long UNIT = 100L << 20; // 100 MiB

    @Test
    void aQueryForAModelNoReplicaHoldsIsServedAfterItsLoadAndPredictedAtLoadPlusService() {
        var c = VirtualCluster.multiModel(1).model("a", UNIT, 30 * MS, 5 * MS, 0)
                .replica("r", 4 * UNIT);
        c.now = T;
        int q = c.submit("a", T + 100 * MS);

        assertThat(c.loads).singleElement().satisfies(l -> {
            assertThat(l.model()).isEqualTo("a");
            assertThat(l.predictedStart()).isEqualTo(T);
            assertThat(l.predictedFinish()).isEqualTo(T + 30 * MS);
        });
        assertThat(c.batches).singleElement().satisfies(b -> {
            assertThat(b.model()).isEqualTo("a");
            assertThat(b.predictedStart()).isEqualTo(T + 30 * MS);
            assertThat(b.predictedFinish()).isEqualTo(T + 35 * MS);
        });
        c.drain();
        assertThat(c.answeredAt.get(q)).isEqualTo(T + 35 * MS);
        assertThat(c.scheduler.coldStarts()).isEqualTo(1);
        assertThat(c.scheduler.loads()).isEqualTo(1);
        assertThat(c.scheduler.loadNanos()).isEqualTo(30 * MS);
        assertThat(c.scheduler.heldModels("r")).containsExactly("a");

        int warm = c.submit("a", c.now + 100 * MS);
        assertThat(c.batches.get(1).predictedFinish()).as("held now: no second load").isEqualTo(c.now + 5 * MS);
        c.drain();
        assertThat(c.answeredAt.get(warm)).isPositive();
        assertThat(c.scheduler.loads()).isEqualTo(1);
        assertThat(c.scheduler.coldStarts()).isEqualTo(1);
    }

    @Test
    void aQueryWhoseModelCannotBeLoadedInTimeIsAnsweredWithTheDefaultAtOnceAndTheModelLoadedForTheNext() {
        // the load (200 ms) takes longer than the SLO (100 ms): no query alone can wait for it
        var c = VirtualCluster.multiModel(1).model("a", UNIT, 200 * MS, 5 * MS, 0)
                .replica("r", 4 * UNIT);
        c.now = T;
        c.submit("a", T + 100 * MS);
        assertThat(c.loads).as("asked for once: a rarely used model evicts nothing").isEmpty();
        c.now = T + 10 * MS;
        c.submit("a", c.now + 100 * MS);

        assertThat(c.rejected).containsExactly(Map.entry(RejectReason.INFEASIBLE, 2));
        assertThat(c.rejectedAt).containsExactly(T, T + 10 * MS);
        assertThat(c.batches).isEmpty();
        assertThat(c.loads).as("loaded anyway, for the queries after").singleElement().satisfies(l -> {
            assertThat(l.model()).isEqualTo("a");
            assertThat(l.predictedFinish()).isEqualTo(T + 210 * MS);
        });
        c.drain();

        c.now = Math.max(c.now, T + 300 * MS);
        int next = c.submit("a", c.now + 100 * MS);
        c.drain();
        assertThat(c.answeredAt.get(next)).as("served from the loaded model").isEqualTo(T + 305 * MS);
        assertThat(c.scheduler.loads()).isEqualTo(1);
        assertThat(c.scheduler.coldStarts()).as("the two queries before the load").isEqualTo(2);
    }

    @Test
    void aModelThatCannotBeLoadedInTimeIsLoadedOnlyOnceTheReplicaHasNothingElseToDo() {
        var c = VirtualCluster.multiModel(1).model("hot", UNIT, 10 * MS, 50 * MS, 0)
                .model("cold", UNIT, 200 * MS, 5 * MS, 0).replica("r", UNIT).preloaded("r", "hot");
        c.now = T;
        int hot = c.submit("hot", T + 100 * MS);
        c.submit("cold", T + 100 * MS);
        c.submit("cold", T + 100 * MS);

        assertThat(c.rejected).containsExactly(Map.entry(RejectReason.INFEASIBLE, 2));
        assertThat(c.loads).as("not while the hot model's batch is outstanding").isEmpty();
        c.drain();

        assertThat(c.answeredAt.get(hot)).isEqualTo(T + 50 * MS);
        assertThat(c.loads).singleElement().satisfies(l -> {
            assertThat(l.model()).isEqualTo("cold");
            assertThat(l.predictedStart()).isGreaterThanOrEqualTo(T + 50 * MS);
        });
        assertThat(c.unloads).as("the idle hot model made room").containsExactly("hot");
        assertThat(c.scheduler.heldModels("r")).containsExactly("cold");
    }

    @Test
    void theLeastRecentlyUsedModelIsEvictedToMakeRoom() {
        var c = VirtualCluster.multiModel(1).replica("r", 3 * UNIT);
        for (String m : List.of("a", "b", "c", "d", "e")) {
            c.model(m, UNIT, 10 * MS, 5 * MS, 0);
        }
        for (String m : List.of("a", "b", "c", "a", "d", "e")) {
            c.submit(m, c.now + 100 * MS);
            c.drain();
        }

        assertThat(c.unloads).as("b, then c: a was used again after them").containsExactly("b", "c");
        assertThat(c.scheduler.heldModels("r")).as("least recently used first").containsExactly("a", "d", "e");
        assertThat(c.scheduler.evictions()).isEqualTo(2);
        assertThat(c.scheduler.loads()).isEqualTo(5);
        assertThat(c.scheduler.usedBytes("r")).isEqualTo(3 * UNIT);
        assertThat(c.violations).isEmpty();
        assertThat(c.good()).isEqualTo(6);
    }

    @Test
    void aLargerModelEvictsAsManyOfTheLeastRecentlyUsedAsItNeeds() {
        var c = VirtualCluster.multiModel(1).replica("r", 3 * UNIT)
                .model("a", UNIT, 10 * MS, 50 * MS, 0)
                .model("b", UNIT, 10 * MS, 5 * MS, 0)
                .model("c", UNIT, 10 * MS, 5 * MS, 0)
                .model("big", 2 * UNIT, 10 * MS, 5 * MS, 0);
        c.submit("b", c.now + 100 * MS);
        c.submit("c", c.now + 100 * MS);
        c.drain();
        c.submit("a", c.now + 500 * MS); // loads a (the last third of the budget) and runs for 50 ms
        c.runUntil(c.now + 12 * MS); // a loaded and running: b and c are the least recently used
        c.submit("big", c.now + 500 * MS);
        assertThat(c.unloads).as("nothing is sent while a runs").isEmpty();
        c.drain();

        assertThat(c.unloads).containsExactly("b", "c");
        assertThat(c.scheduler.heldModels("r")).containsExactly("a", "big");
        assertThat(c.violations).isEmpty();
        assertThat(c.good()).isEqualTo(4);
    }

    @Test
    void aModelIsNotEvictedWhileABatchOfItIsOutstandingSoALargeModelWaitsForIt() {
        var c = VirtualCluster.multiModel(1).overhead(2 * MS).replica("r", 3 * UNIT)
                .model("a", UNIT, 10 * MS, 50 * MS, 0)
                .model("b", UNIT, 10 * MS, 5 * MS, 0)
                .model("big", 3 * UNIT, 10 * MS, 5 * MS, 0);
        c.submit("b", c.now + 100 * MS);
        c.drain();
        int a = c.submit("a", c.now + 500 * MS);
        c.runUntil(c.now + 20 * MS);
        c.submit("big", c.now + 500 * MS); // needs all three units: b can go at once, a only after its batch
        long aAnswered = c.batches.get(1).predictedFinish() + MS;
        c.runUntil(aAnswered - MS - 1);
        assertThat(c.loads).as("not sent ahead while a's batch runs").extracting(Load::model).containsExactly("b", "a");
        c.drain();

        assertThat(c.loads).extracting(Load::model).containsExactly("b", "a", "big");
        assertThat(c.loads.get(2).sentAt()).isGreaterThanOrEqualTo(c.answeredAt.get(a));
        assertThat(c.unloads).containsExactly("b", "a");
        assertThat(c.violations).isEmpty();
        assertThat(c.good()).isEqualTo(3);
    }

    @Test
    void twoModelsSharingOneReplicaNeverOverlapAndEveryActionRunsWhenPredicted() {
        // a budget of two models, three models in use: loads and evictions all along
        var c = VirtualCluster.multiModel(3).replica("r", 2 * UNIT)
                .model("a", UNIT, 8 * MS, 3 * MS, MS / 4)
                .model("b", UNIT, 12 * MS, 4 * MS, MS / 2)
                .model("c", UNIT, 10 * MS, 2 * MS, MS / 4)
                .poisson(150, 10_000 * MS, 100 * MS, 6, 3, 1);
        c.drain();

        assertThat(c.deadlines).hasSizeGreaterThan(1_300);
        assertThat(c.outcomes).allSatisfy(n -> assertThat(n).as("times a query left").isEqualTo(1));
        assertThat(c.violations).isEmpty();
        assertThat(c.scheduler.loads()).isGreaterThan(20);
        assertThat(c.scheduler.evictions()).isEqualTo(c.scheduler.loads() - 2);
        assertThat(c.runs.stream().map(VirtualCluster.Run::model).distinct()).hasSize(3);
        List<VirtualCluster.Run> inOrder = new ArrayList<>(c.runs);
        inOrder.sort(Comparator.comparingLong(VirtualCluster.Run::start));
        for (int i = 1; i < inOrder.size(); i++) {
            assertThat(inOrder.get(i).start()).as("start of %s", inOrder.get(i))
                    .isGreaterThanOrEqualTo(inOrder.get(i - 1).end());
        }
        assertThat(c.runs).allSatisfy(r -> {
            assertThat(r.predictedStart()).as("predicted start of %s", r).isEqualTo(r.start());
            assertThat(r.predictedFinish()).as("predicted finish of %s", r).isEqualTo(r.end());
        });
        assertThat(c.late()).as("answers after their deadline").isZero();
        assertThat(c.good()).isGreaterThan((int) (0.95 * c.deadlines.size()));
    }

    @Test
    void aSecondCopyIsLoadedOnlyWhenTheReplicaHoldingTheModelCannotAnswerInTime() {
        var c = VirtualCluster.multiModel(1).replica("r1", 2 * UNIT).replica("r2", 2 * UNIT)
                .model("a", UNIT, 10 * MS, 20 * MS, 0);
        c.submit("a", c.now + 100 * MS);
        assertThat(c.loads).extracting(Load::replica).containsExactly("r1");
        // r1 busy until 30 ms: a query due in 60 ms waits for it, one due in 40 ms gets a copy on r2
        c.submit("a", c.now + 60 * MS);
        assertThat(c.loads).hasSize(1);
        c.runUntil(c.now + 5 * MS);
        c.submit("a", c.now + 40 * MS);
        assertThat(c.loads).extracting(Load::replica).containsExactly("r1", "r2");
        c.drain();
        assertThat(c.good()).isEqualTo(3);
        assertThat(c.scheduler.heldModels("r2")).containsExactly("a");
    }

    /**
     * One model overloads the replica that holds it while three others sit idle. Its queries beyond
     * that replica's capacity are dropped as infeasible (no replica could answer them in time, the
     * others counting a load), so its earliest query is always one the holder can answer: that
     * alone never calls for a copy. Queries it drops do: copies are loaded onto the idle replicas,
     * and the model is answered in full.
     */
    @Test
    void aModelThatDropsQueriesAsInfeasibleGetsCopiesOnIdleReplicas() {
        var c = VirtualCluster.multiModel(3).overhead(MS / 2);
        for (int i = 1; i <= 4; i++) {
            c.replica("r" + i, 2 * UNIT);
        }
        // 5 ms + 0.5 ms·b: at most about 1,800/s on one replica within a 100 ms SLO
        c.model("hot", UNIT, 10 * MS, 5 * MS, MS / 2);
        c.poisson(2_500, 3_000 * MS, 100 * MS, 1);
        c.drain();

        assertThat(c.outcomes).allSatisfy(n -> assertThat(n).as("times a query left").isEqualTo(1));
        assertThat(c.violations).isEmpty();

        assertThat(c.loads.stream().map(Load::replica).distinct().count()).as("replicas holding a copy")
                .isGreaterThanOrEqualTo(2);
        assertThat(c.good()).as("answered in time of %d", c.deadlines.size())
                .isGreaterThan((int) (0.95 * c.deadlines.size()));
    }

    @Test
    void modelsSpreadOverTwoReplicasAndNothingIsLostWhenOneIsRemoved() {
        var c = VirtualCluster.multiModel(5).replica("r1", 3 * UNIT).replica("r2", 3 * UNIT);
        double[] zipf = new double[8];
        for (int i = 0; i < zipf.length; i++) {
            c.model("m" + i, UNIT, 10 * MS, 3 * MS, MS / 4);
            zipf[i] = 1.0 / (i + 1);
        }
        c.poisson(200, 6_000 * MS, 100 * MS, zipf);
        c.kill("r2", 3_000 * MS);
        c.drain();

        assertThat(c.outcomes).allSatisfy(n -> assertThat(n).as("times a query left").isEqualTo(1));
        assertThat(c.violations).isEmpty();
        Map<String, Long> loadsByReplica = c.loads.stream()
                .collect(Collectors.groupingBy(Load::replica, Collectors.counting()));
        assertThat(loadsByReplica).containsKeys("r1", "r2");
        assertThat(c.scheduler.queued()).isZero();
        assertThat(c.good()).isGreaterThan((int) (0.9 * c.deadlines.size()));
    }

    @Test
    void nothingIsLostOrAnsweredTwiceWhenLoadsAndBatchesFail() {
        var c = VirtualCluster.multiModel(9).overhead(MS).failing(0.1)
                .replica("r1", 2 * UNIT).replica("r2", 2 * UNIT);
        double[] zipf = new double[6];
        for (int i = 0; i < zipf.length; i++) {
            c.model("m" + i, UNIT, 10 * MS, 3 * MS, MS / 4);
            zipf[i] = 1.0 / (i + 1);
        }
        c.poisson(150, 8_000 * MS, 100 * MS, zipf).drain();

        assertThat(c.outcomes).allSatisfy(n -> assertThat(n).as("times a query left").isEqualTo(1));
        assertThat(c.violations).isEmpty();
        assertThat(c.failedLoads).as("failed loads").isGreaterThan(5);
        assertThat(c.failedBatches).as("failed or refused batches").isGreaterThan(20);
        assertThat(c.scheduler.queued()).isZero();
        assertThat(c.good()).isGreaterThan((int) (0.8 * c.deadlines.size()));
    }

    @Test
    void withItsModelHeldItSchedulesExactlyAsTheClockworkModelSchedulerDoes() {
        // the same arrivals to a ModelScheduler (clockwork) and to a MultiModelScheduler whose one model is held
        var single = VirtualCluster.of(SchedulerConfig.of(PolicyKind.CLOCKWORK, 20 * MS), 1)
                .replica("r", 5 * MS, MS / 2, MS).profiled("r", 16);
        var multi = VirtualCluster.multiModel(1).overhead(MS)
                .model("a", UNIT, 30 * MS, 5 * MS, MS / 2).replica("r", UNIT).preloaded("r", "a");
        java.util.SplittableRandom random = new java.util.SplittableRandom(4);
        long t = 0;
        for (int i = 0; i < 3_000; i++) {
            t += (long) (-Math.log(1 - random.nextDouble()) / 1_500 * 1e9); // 1,500/s: past capacity
            long at = t;
            single.at(at, () -> single.submit(at + 20 * MS));
            multi.at(at, () -> multi.submit("a", at + 20 * MS));
        }
        single.drain();
        multi.drain();

        assertThat(multi.loads).isEmpty();
        assertThat(multi.batches).hasSize(single.batches.size());
        for (int i = 0; i < single.batches.size(); i++) {
            Batch<Integer> s = single.batches.get(i);
            Batch<Integer> m = multi.batches.get(i);
            assertThat(List.of(m.size(), m.sentAt(), m.predictedStart(), m.predictedFinish())).as("batch %d", i)
                    .isEqualTo(List.of(s.size(), s.sentAt(), s.predictedStart(), s.predictedFinish()));
        }
        assertThat(multi.rejected).isEqualTo(single.rejected).containsKey(RejectReason.INFEASIBLE);
        assertThat(multi.good()).isEqualTo(single.good());
    }

    @Test
    void anOverheadMeasuredAboveTheSloOnAColdReplicaIsProbedAgainOnceOldAndTheReplicaServesAgain() {
        // the first batch's answer comes back 150 ms late, as from a cold gateway: the replica's
        // overhead of 151 ms makes every query of a 100 ms SLO look infeasible, so no batch would be
        // sent again and no faster sample could ever lower it
        var c = VirtualCluster.multiModel(11).overhead(MS).slowFirstBatch(150 * MS, 0)
                .model("a", UNIT, 10 * MS, 5 * MS, MS / 4).model("b", UNIT, 10 * MS, 5 * MS, MS / 4)
                .replica("r", 2 * UNIT).preloaded("r", "a").preloaded("r", "b");
        c.now = T;
        c.submit("a", T + 100 * MS);
        c.drain();
        long firstAnswer = c.now;
        assertThat(firstAnswer).as("the slow first batch").isEqualTo(T + 156 * MS + MS / 4);
        c.poisson(100, 10_000 * MS, 100 * MS, 1, 1).drain();

        assertThat(c.outcomes).allSatisfy(n -> assertThat(n).as("times a query left").isEqualTo(1));
        assertThat(c.violations).isEmpty();
        long recovered = firstAnswer + 2_000 * MS + 100 * MS; // the sample age limit, then a probe's round trip
        List<Integer> after = afterTime(c, recovered);
        assertThat(after).hasSizeGreaterThan(700);
        assertThat(after).as("queries arriving once the old overhead was probed").allSatisfy(q ->
                assertThat(c.answeredAt.get(q)).as("query %d answered", q).isBetween(0L, c.deadlines.get(q)));
        assertThat(c.rejected.get(RejectReason.INFEASIBLE)).as("defaults while the overhead was recent")
                .isLessThan(c.deadlines.size() / 4);
    }

    @Test
    void aServiceTimeMeasuredAboveTheSloIsProbedAgainOnceOldWhileAnotherModelKeepsTheReplicaBusy() {
        // a's first batch runs 150 ms longer, as a cold container's: its profile says every query of a
        // is infeasible, while b's batches keep the replica's own estimates recent
        var c = VirtualCluster.multiModel(12).overhead(MS).slowFirstBatch(0, 150 * MS)
                .model("a", UNIT, 10 * MS, 5 * MS, MS / 4).model("b", UNIT, 10 * MS, 5 * MS, MS / 4)
                .replica("r", 2 * UNIT).preloaded("r", "a").preloaded("r", "b");
        c.now = 5 * T; // the profiling samples are older than the age limit: a's cold sample is all that counts
        c.submit("a", c.now + 200 * MS);
        c.drain();
        long firstAnswer = c.now;
        c.poisson(100, 10_000 * MS, 100 * MS, 1, 1).drain();

        assertThat(c.outcomes).allSatisfy(n -> assertThat(n).as("times a query left").isEqualTo(1));
        assertThat(c.violations).isEmpty();
        List<Integer> after = afterTime(c, firstAnswer + 2_000 * MS + 100 * MS);
        assertThat(after).hasSizeGreaterThan(700);
        assertThat(after).as("queries of a and b arriving once a's old profile was probed").allSatisfy(q ->
                assertThat(c.answeredAt.get(q)).as("query %d answered", q).isBetween(0L, c.deadlines.get(q)));
    }

    /** The queries that arrived at or after {@code t} (every query of the cluster is due 100 ms after it arrived). */
    private static List<Integer> afterTime(VirtualCluster<?> c, long t) {
        List<Integer> out = new ArrayList<>();
        for (int q = 0; q < c.deadlines.size(); q++) {
            if (c.deadlines.get(q) - 100 * MS >= t) {
                out.add(q);
            }
        }
        return out;
    }

    @Test
    void aReplicasWarmUpSampleGivesItItsOwnOverheadAndTheModelsServiceTime() {
        // profiled with no overhead; r2's warm-up batch of one measured 4 ms of service in a 24 ms round trip
        var c = VirtualCluster.multiModel(1).model("a", UNIT, 10 * MS, 5 * MS, 0)
                .replica("r1", UNIT).replica("r2", UNIT).preloaded("r1", "a").preloaded("r2", "a");
        c.now = 5 * T; // the profiling samples no longer count: the warm-up's are the model's
        c.scheduler.profileSample("r2", "a", 1, 4 * MS, 24 * MS, c.now);
        c.scheduler.setAvailable("r1", false, c.now);
        c.submit("a", c.now + 100 * MS);
        c.scheduler.setAvailable("r1", true, c.now);
        c.submit("a", c.now + 100 * MS);

        assertThat(c.batches).extracting(Batch::replica).containsExactly("r2", "r1");
        assertThat(c.batches.get(0).predictedStart()).as("r2's own overhead, half of it on the way")
                .isEqualTo(c.now + 10 * MS);
        assertThat(c.batches.get(0).predictedFinish()).as("the warm-up's service time").isEqualTo(c.now + 14 * MS);
        assertThat(c.batches.get(1).predictedStart()).as("r1: every replica's overhead together, the 10th "
                + "percentile of 16 profiling samples of none and the warm-up's").isEqualTo(c.now);
        assertThatThrownBy(() -> c.scheduler.profileSample("r2", "nope", 1, MS, MS, c.now))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aModelLargerThanEveryBudgetIsRejectedAsHavingNoReplicaAndAnUnknownModelIsAnError() {
        var c = VirtualCluster.multiModel(1).replica("r", UNIT)
                .model("huge", 2 * UNIT, 10 * MS, 5 * MS, 0);
        c.submit("huge", c.now + 100 * MS);
        assertThat(c.rejected).containsExactly(Map.entry(RejectReason.NO_REPLICA, 1));
        assertThatThrownBy(() -> c.scheduler.submit("nope", -1, 100 * MS, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nope");
        assertThatThrownBy(() -> new MultiModelScheduler<Integer>(SchedulerConfig.of(PolicyKind.SYMPHONY, MS), c))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("clockwork");
    }

    @Test
    void aPreloadedModelIsServedWithoutALoad() {
        var c = VirtualCluster.multiModel(1).model("a", UNIT, 30 * MS, 5 * MS, 0)
                .model("b", UNIT, 30 * MS, 5 * MS, 0).replica("r", UNIT).preloaded("r", "a");
        assertThatThrownBy(() -> c.scheduler.preloaded("r", "b", 0)).as("past the budget")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("budget");
        c.now = T;
        c.submit("a", T + 100 * MS);

        assertThat(c.loads).isEmpty();
        assertThat(c.batches).singleElement().satisfies(b -> assertThat(b.predictedFinish()).isEqualTo(T + 5 * MS));
        assertThat(c.scheduler.coldStarts()).isZero();
    }
}

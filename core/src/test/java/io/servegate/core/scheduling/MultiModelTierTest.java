package io.servegate.core.scheduling;

import static io.servegate.core.scheduling.VirtualCluster.MS;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Apps of different tiers on different models that share one multi-model replica, in virtual
 * time: a higher tier's model keeps the replica time it needs, a lower tier's queries beyond what
 * it leaves are shed on arrival, and below capacity nothing changes.
 */
class MultiModelTierTest {

    private static final long UNIT = 100L << 20;
    private static final long SLO = 100 * MS;
    private static final long DURATION = 10_000 * MS;
    /** About what the replica serves of one model alone within the SLO (5 + 0.5 b ms per batch). */
    private static final double CAPACITY = 1_500;
    private static final Tenant CRITICAL = new Tenant("crit", Priority.CRITICAL, 1);
    private static final Tenant SHEDDABLE = new Tenant("shed", Priority.SHEDDABLE, 1);

    /** Model a for {@code first}'s app and b for {@code second}'s, each at its load times capacity, on one replica holding both. */
    private static VirtualCluster<MultiModelScheduler<Integer>> run(Tenant first, double load, Tenant second, double other) {
        var c = VirtualCluster.multiModel(1).replica("r", 2 * UNIT)
                .model("a", UNIT, 30 * MS, 5 * MS, MS / 2).model("b", UNIT, 30 * MS, 5 * MS, MS / 2)
                .preloaded("r", "a").preloaded("r", "b");
        c.poisson("a", first, load * CAPACITY, DURATION, SLO);
        c.poisson("b", second, other * CAPACITY, DURATION, SLO);
        c.drain();
        return c;
    }

    private static double inSlo(VirtualCluster<?> c, Tenant t) {
        return (double) c.good(t.app()) / c.submitted(t.app());
    }

    @Test
    void atTwiceCapacityTheCriticalAppsModelIsServedFirst() {
        // without the tiers both models' apps answer about 8 % in time: the sheddable app's queries, due
        // first as often as not, took the replica from the critical app's model
        var c = run(CRITICAL, 0.5, SHEDDABLE, 1.5);
        assertThat(inSlo(c, CRITICAL)).as("critical in SLO").isGreaterThanOrEqualTo(0.99);
        assertThat(c.late(SHEDDABLE.app())).as("sheddable late").isZero();
        // what the critical app leaves (about 750/s), shed on arrival beyond it: where its queries waited to
        // be found infeasible, the model's batches shrank with their deadlines and it got 155/s
        assertThat(c.good(SHEDDABLE.app()) / 10.0).as("sheddable goodput/s").isGreaterThan(0.4 * CAPACITY);
        assertThat(c.rejected.get(RejectReason.SHED)).as("shed on arrival")
                .isGreaterThan(2 * c.rejected.getOrDefault(RejectReason.INFEASIBLE, 0));
        var equal = run(new Tenant("crit", Priority.STANDARD, 1), 0.5, new Tenant("shed", Priority.STANDARD, 1), 1.5);
        assertThat(inSlo(equal, CRITICAL)).as("the same loads without tiers").isLessThan(0.5);
    }

    @Test
    void belowCapacityBothModelsAreServedAsWithoutTiers() {
        for (double[] loads : new double[][] {{0.6, 0.3}, {0.3, 0.6}}) {
            var c = run(CRITICAL, loads[0], SHEDDABLE, loads[1]);
            assertThat(inSlo(c, CRITICAL)).as("critical at %s", loads[0]).isGreaterThanOrEqualTo(0.999);
            assertThat(inSlo(c, SHEDDABLE)).as("sheddable at %s", loads[1]).isGreaterThanOrEqualTo(0.999);
        }
    }
}

package io.servegate.sim.report;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.cli.ScenarioBuilder;

/**
 * Symphony's Table 4 (§5.2.2), ResNet50 row, as scenarios: 8 replicas, α 1.053 ms, β 5.072 ms,
 * SLO 25 ms, no transport overhead (the analytic model has none), 10 s.
 *
 * <ul>
 *   <li><b>Staggered execution</b>: one scheduler over the 8 replicas, offered the staggered
 *       throughput (5,839 r/s).</li>
 *   <li><b>No coordination</b>: what Nexus does. Each replica has its own one-replica scheduler
 *       and an eighth of the traffic, dealt in turn (so uniform traffic stays uniform per
 *       replica); it runs batches back to back of the size Nexus plans, the largest b with
 *       2·ℓ(b) ≤ SLO (7), with Clipper's work-conserving policy at that fixed size. Offered the
 *       uncoordinated throughput (4,501 r/s).</li>
 * </ul>
 */
public final class Table4 {

    public static final int REPLICAS = 8;
    public static final double ALPHA_MS = 1.053;
    public static final double BETA_MS = 5.072;
    public static final double SLO_MS = 25;
    /** Symphony's measured goodput under Poisson arrivals, r/s. */
    public static final double SYMPHONY_MEASURED = 5_169;
    public static final double CLOCKWORK_MEASURED = 2_036;
    public static final double NEXUS_MEASURED = 3_965;

    private Table4() {
    }

    public static int staggeredBatch() {
        return Analytic.staggeredBatch(SLO_MS, BETA_MS, ALPHA_MS, REPLICAS);
    }

    public static double staggeredThroughput() {
        return Analytic.throughput(staggeredBatch(), BETA_MS, ALPHA_MS, REPLICAS);
    }

    public static int uncoordinatedBatch() {
        return Analytic.uncoordinatedBatch(SLO_MS, BETA_MS, ALPHA_MS);
    }

    public static double uncoordinatedThroughput() {
        return Analytic.throughput(uncoordinatedBatch(), BETA_MS, ALPHA_MS, REPLICAS);
    }

    /** One scheduler with {@code policy} over the 8 replicas, offered the staggered throughput. */
    public static ScenarioBuilder staggered(PolicyKind policy, ScenarioBuilder.Arrivals arrivals, long seed) {
        return base(arrivals, seed).policy(policy).rate(staggeredThroughput());
    }

    /** 8 independent replicas at Nexus's batch size, offered the uncoordinated throughput. */
    public static ScenarioBuilder uncoordinated(ScenarioBuilder.Arrivals arrivals, long seed) {
        return base(arrivals, seed).policy(PolicyKind.CLIPPER).independent(true)
                .batchSizes(uncoordinatedBatch(), uncoordinatedBatch()).rate(uncoordinatedThroughput());
    }

    private static ScenarioBuilder base(ScenarioBuilder.Arrivals arrivals, long seed) {
        return new ScenarioBuilder().replicas(REPLICAS).linear(BETA_MS, ALPHA_MS, 0).sloMs(SLO_MS).overheadMs(0)
                .arrivals(arrivals).durationS(10).seed(seed);
    }
}

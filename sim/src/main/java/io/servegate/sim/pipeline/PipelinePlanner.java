package io.servegate.sim.pipeline;

import io.servegate.sim.latency.HardwareCosts;
import io.servegate.sim.latency.LatencyModel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;

/**
 * InferLine's planner (SoCC'20, §4.3): the cheapest configuration whose estimated p99 end-to-end
 * latency on the sample trace is within the SLO, found greedily.
 *
 * <ol>
 * <li><b>Initialise</b> (Algorithm 1): every stage at batch size 1, one replica, on its fastest
 *     hardware (lowest latency at batch size 1). If the longest path's service time is not below
 *     the SLO, no configuration is feasible. Otherwise add a replica to the throughput bottleneck
 *     (least replicas·b/ℓ(b) per query it sees) until the estimator finds the SLO met.</li>
 * <li><b>Minimise cost</b> (Algorithm 2): each step tries, for every stage, doubling its batch
 *     size, removing a replica, and moving it to the next cheaper hardware kind, and takes the
 *     feasible candidate that costs least. A larger batch costs nothing, so it is taken only when
 *     no candidate saves money (the one with the lowest p99 among them); it lets a later step
 *     remove replicas. A hardware downgrade freezes the other stages, re-initialises the stage on
 *     the cheaper kind and minimises its batch size and replicas alone; it is a candidate only if
 *     that ends cheaper than the same local minimisation on the stage's current kind. (The paper
 *     compares with the current configuration; from Algorithm 1's unbatched start that moves an
 *     accelerator's stage to slower hardware before batching was ever tried on the accelerator.)
 *     The search stops when no candidate is feasible and cheaper or larger.</li>
 * </ol>
 *
 * <p>The two baselines of the paper's comparison use the same estimator and feasibility test:
 * {@link PlanStrategy#COARSE_GRAINED} and {@link PlanStrategy#BATCH_ONE}.
 */
public final class PipelinePlanner {

    private final PipelineEstimator estimator;
    private final HardwareCosts costs;
    private final int batchCap;
    private final int replicaCap;
    private final double sloMs;
    private final Map<PipelineConfig, PipelineEstimate> seen = new HashMap<>();

    /**
     * @param batchCap the largest batch size any stage may get (doubling from 1)
     * @param replicaCap the most replicas any stage may get before a configuration counts as infeasible
     */
    public PipelinePlanner(PipelineEstimator estimator, HardwareCosts costs, int batchCap, int replicaCap) {
        if (batchCap < 1 || replicaCap < 1) {
            throw new IllegalArgumentException("need batchCap >= 1 and replicaCap >= 1");
        }
        this.estimator = estimator;
        this.costs = costs;
        this.batchCap = batchCap;
        this.replicaCap = replicaCap;
        this.sloMs = estimator.spec().sloMs();
    }

    /** The plan of {@code strategy}, or empty when it finds no configuration within the SLO. */
    public Optional<PipelinePlan> plan(PlanStrategy strategy) {
        seen.clear(); // each plan counts its own estimates
        int before = estimator.runs();
        Optional<PipelineConfig> config = switch (strategy) {
            case INFERLINE -> initialise().map(c -> minimiseCost(c, true));
            case BATCH_ONE -> initialise().map(c -> minimiseCost(c, false));
            case COARSE_GRAINED -> coarseGrained();
        };
        return config.map(c -> new PipelinePlan(strategy, c, c.costPerHour(costs), estimate(c),
                estimator.runs() - before));
    }

    /** The estimate of {@code config}, remembered for the plan in progress. */
    PipelineEstimate estimate(PipelineConfig config) {
        return seen.computeIfAbsent(config, estimator::estimate);
    }

    boolean feasible(PipelineConfig config) {
        PipelineEstimate e = estimate(config);
        return e.failed() == 0 && e.p99Ms() <= sloMs;
    }

    /** Algorithm 1. */
    Optional<PipelineConfig> initialise() {
        int n = stages();
        List<StageConfig> s = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            s.add(new StageConfig(fastest(i), 1, 1));
        }
        PipelineConfig c = new PipelineConfig(s);
        if (serviceTimeMs(c) >= sloMs) {
            return Optional.empty();
        }
        return scaleUntilFeasible(c, allStages());
    }

    /** Adds a replica to the bottleneck among {@code stages} until the configuration is feasible. */
    private Optional<PipelineConfig> scaleUntilFeasible(PipelineConfig c, int[] stages) {
        while (!feasible(c)) {
            PipelineEstimate e = estimate(c);
            int bottleneck = -1;
            double least = Double.POSITIVE_INFINITY;
            for (int i : stages) {
                StageConfig sc = c.stage(i);
                double throughput = sc.replicas() * sc.maxBatch() * 1e9 / latency(i, sc.hardware()).meanNanos(sc.maxBatch())
                        / Math.max(e.stages().get(i).scaleFactor(), 1e-9);
                if (sc.replicas() < replicaCap && throughput < least) {
                    least = throughput;
                    bottleneck = i;
                }
            }
            if (bottleneck < 0) {
                return Optional.empty();
            }
            c = c.with(bottleneck, c.stage(bottleneck).withReplicas(c.stage(bottleneck).replicas() + 1));
        }
        return Optional.of(c);
    }

    /** Algorithm 2 from a feasible {@code c}, over every stage, with or without batch-size and hardware moves. */
    private PipelineConfig minimiseCost(PipelineConfig c, boolean batching) {
        return greedy(c, allStages(), batching, true);
    }

    private PipelineConfig greedy(PipelineConfig current, int[] stages, boolean batching, boolean hardware) {
        while (true) {
            double cost = current.costPerHour(costs);
            PipelineConfig cheapest = null;
            PipelineConfig bestBatch = null;
            for (int i : stages) {
                StageConfig s = current.stage(i);
                if (s.replicas() > 1) {
                    PipelineConfig fewer = current.with(i, s.withReplicas(s.replicas() - 1));
                    if (feasible(fewer) && (cheapest == null || cheaper(fewer, cheapest))) {
                        cheapest = fewer;
                    }
                }
                if (hardware) {
                    PipelineConfig down = downgrade(current, i, batching, greedy(current, new int[] {i}, batching, false));
                    if (down != null && (cheapest == null || cheaper(down, cheapest))) {
                        cheapest = down;
                    }
                }
                if (batching && s.maxBatch() * 2 <= batchCap) {
                    PipelineConfig larger = current.with(i, s.withMaxBatch(s.maxBatch() * 2));
                    if (feasible(larger) && (bestBatch == null || estimate(larger).p99Ms() < estimate(bestBatch).p99Ms())) {
                        bestBatch = larger;
                    }
                }
            }
            if (cheapest != null && cheapest.costPerHour(costs) < cost) {
                current = cheapest;
            } else if (bestBatch != null) {
                current = bestBatch;
            } else {
                return current;
            }
        }
    }

    /**
     * Stage {@code i} on the next cheaper hardware kind, re-initialised and minimised alone with the
     * other stages frozen; null when there is no cheaper kind or it ends no cheaper than
     * {@code yardstick}, the stage minimised alone on its current kind.
     */
    private PipelineConfig downgrade(PipelineConfig c, int i, boolean batching, PipelineConfig yardstick) {
        String now = c.stage(i).hardware();
        String cheaper = null;
        for (String k : costs.byPriceDescending(estimator.profiles().kinds(model(i)))) {
            if (costs.perReplicaHour(k) < costs.perReplicaHour(now)) {
                cheaper = k;
                break;
            }
        }
        if (cheaper == null) {
            return null;
        }
        PipelineConfig start = c.with(i, new StageConfig(cheaper, 1, 1));
        if (serviceTimeMs(start) >= sloMs) {
            return null;
        }
        PipelineConfig down = scaleUntilFeasible(start, new int[] {i})
                .map(f -> greedy(f, new int[] {i}, batching, false)).orElse(null);
        return down != null && down.costPerHour(costs) < yardstick.costPerHour(costs) ? down : null;
    }

    /**
     * The coarse-grained baseline: every stage on its fastest hardware with the same batch size
     * and the same replica count, the pipeline replicated as one unit. Tries each batch size
     * 1, 2, 4, … whose service time is below the SLO, each with the fewest replicas that meet
     * it, and keeps the cheapest.
     */
    private Optional<PipelineConfig> coarseGrained() {
        PipelineConfig best = null;
        for (int b = 1; b <= batchCap; b *= 2) {
            List<StageConfig> s = new ArrayList<>();
            for (int i = 0; i < stages(); i++) {
                s.add(new StageConfig(fastest(i), 1, b));
            }
            PipelineConfig c = new PipelineConfig(s);
            if (serviceTimeMs(c) >= sloMs) {
                break;
            }
            for (int k = 1; k <= replicaCap; k++) {
                if (feasible(c)) {
                    if (best == null || c.costPerHour(costs) < best.costPerHour(costs)) {
                        best = c;
                    }
                    break;
                }
                int next = k + 1;
                List<StageConfig> more = c.stages().stream().map(x -> x.withReplicas(next)).toList();
                c = new PipelineConfig(more);
            }
        }
        return Optional.ofNullable(best);
    }

    /** The longest path's mean service time at each stage's batch size, ms. */
    double serviceTimeMs(PipelineConfig c) {
        return estimator.spec().longestPath(i -> latency(i, c.stage(i).hardware()).meanNanos(c.stage(i).maxBatch()) / 1e6);
    }

    /** Stage {@code i}'s priced hardware kind with the lowest latency at batch size 1 (ties: the cheaper). */
    private String fastest(int i) {
        String best = null;
        for (String k : estimator.profiles().kinds(model(i))) {
            if (!costs.has(k)) {
                continue;
            }
            if (best == null || latency(i, k).meanNanos(1) < latency(i, best).meanNanos(1)
                    || (latency(i, k).meanNanos(1) == latency(i, best).meanNanos(1)
                            && costs.perReplicaHour(k) < costs.perReplicaHour(best))) {
                best = k;
            }
        }
        if (best == null) {
            throw new IllegalArgumentException("model '" + model(i) + "' has no profile on a hardware kind of the cost table");
        }
        return best;
    }

    private boolean cheaper(PipelineConfig a, PipelineConfig b) {
        double ca = a.costPerHour(costs);
        double cb = b.costPerHour(costs);
        return ca < cb || (ca == cb && estimate(a).p99Ms() < estimate(b).p99Ms());
    }

    private LatencyModel latency(int i, String kind) {
        return estimator.profiles().latency(model(i), kind);
    }

    private String model(int i) {
        return estimator.spec().stages().get(i).model();
    }

    private int stages() {
        return estimator.spec().stages().size();
    }

    private int[] allStages() {
        return IntStream.range(0, stages()).toArray();
    }
}

package io.servegate.sim.pipeline;

import io.servegate.core.autoscaling.AutoscalerConfig;
import io.servegate.sim.Autoscaling;
import io.servegate.sim.PipelineRouter;
import io.servegate.sim.Scenario;
import io.servegate.sim.latency.HardwareCosts;
import io.servegate.sim.ScalingTrace;
import java.util.ArrayList;
import java.util.List;

/**
 * InferLine's Tuner in virtual time: a planned pipeline configuration on a trace whose rate
 * changes, run once as planned (static) and once with every stage scaled on its own by the
 * autoscaling core's {@link io.servegate.core.autoscaling.Autoscaler}. Each stage's autoscaler
 * plans for the stage's budget from the plan ({@code deadline_micros}) as its SLO, not the
 * end-to-end one, and starts from the plan's replicas. Batch sizes and hardware stay as planned.
 */
public final class PipelineTuning {

    private PipelineTuning() {
    }

    /**
     * What every stage's autoscaler shares.
     *
     * @param minReplicas   never fewer per stage
     * @param maxReplicas   never more per stage
     * @param startNanos    from a scale-up to the new replica taking batches
     * @param tickNanos     how often each autoscaler decides
     * @param cooldownNanos the scale-down cooldown
     */
    public record Settings(int minReplicas, int maxReplicas, long startNanos, long tickNanos, long cooldownNanos) {
    }

    /**
     * One stage's share of a run.
     *
     * @param budgetMicros   the stage's budget, the SLO its autoscaler planned for
     * @param replicaSeconds replica-seconds paid for
     * @param peakReplicas   the most replicas it had at once
     * @param decisions      changes its autoscaler made (0 when static)
     */
    public record StageOutcome(String stage, long budgetMicros, double replicaSeconds, int peakReplicas, int decisions) {
    }

    /**
     * One run.
     *
     * @param tuned           whether the stages were scaled
     * @param attainment      the share of all queries that finished within the SLO
     * @param phaseAttainment the same per phase of the trace, by arrival time
     * @param p99Ms           end-to-end p99 of the finished queries
     * @param costPerHour     the mean cost per hour over the run (replica-seconds at their kind's price)
     */
    public record Outcome(boolean tuned, double attainment, List<Double> phaseAttainment, double p99Ms,
            double costPerHour, List<StageOutcome> stages) {
    }

    /**
     * Runs {@code config} on {@code arrivals} static, then tuned.
     *
     * @param budgetsMicros each stage's budget (the plan's {@code deadline_micros})
     * @param phaseSeconds  the trace's phases, seconds each, for the per-phase attainment
     * @return the static run, then the tuned one
     */
    public static List<Outcome> compare(PipelineEstimator estimator, PipelineConfig config, long[] budgetsMicros,
            Scenario arrivals, int[] phaseSeconds, Settings settings, HardwareCosts costs) {
        List<Autoscaling> tuning = new ArrayList<>();
        for (long budget : budgetsMicros) {
            if (budget <= 0) {
                throw new IllegalArgumentException("every stage needs a budget > 0 to be tuned, got " + budget + " µs");
            }
            AutoscalerConfig c = AutoscalerConfig.of(settings.minReplicas(), settings.maxReplicas())
                    .withTiming(settings.cooldownNanos(), AutoscalerConfig.of(1, 1).settleNanos())
                    .withSlo(budget * 1000);
            tuning.add(new Autoscaling(c, settings.startNanos(), settings.tickNanos()));
        }
        return List.of(
                outcome(estimator, config, budgetsMicros, arrivals, phaseSeconds, costs, null),
                outcome(estimator, config, budgetsMicros, arrivals, phaseSeconds, costs, tuning));
    }

    private static Outcome outcome(PipelineEstimator estimator, PipelineConfig config, long[] budgetsMicros,
            Scenario arrivals, int[] phaseSeconds, HardwareCosts costs, List<Autoscaling> tuning) {
        PipelineEstimator.Execution run = estimator.execute(config, arrivals, tuning);
        PipelineEstimate e = estimator.summarise(run);
        double seconds = arrivals.durationNanos() / 1e9;
        List<StageOutcome> stages = new ArrayList<>();
        double dollars = 0;
        for (int i = 0; i < config.stages().size(); i++) {
            StageConfig c = config.stage(i);
            ScalingTrace trace = run.result().models().get(i).stats().scaling();
            double replicaSeconds = trace == null ? c.replicas() * seconds : trace.replicaSeconds();
            int peak = trace == null ? c.replicas()
                    : Math.max(c.replicas(), trace.samples().stream().mapToInt(ScalingTrace.Sample::replicas).max()
                            .orElse(c.replicas()));
            stages.add(new StageOutcome(estimator.spec().stages().get(i).name(), budgetsMicros[i], replicaSeconds, peak,
                    trace == null ? 0 : trace.decisions().size()));
            dollars += replicaSeconds / 3600 * costs.perReplicaHour(c.hardware());
        }
        List<Double> phases = new ArrayList<>();
        PipelineRouter r = run.router();
        for (int p = 0, from = 0; p < phaseSeconds.length; from += phaseSeconds[p], p++) {
            long arrived = 0;
            long within = 0;
            for (int s = from; s < from + phaseSeconds[p] && s < r.arrivedBySecond.length; s++) {
                arrived += r.arrivedBySecond[s];
                within += r.withinSloBySecond[s];
            }
            phases.add(arrived == 0 ? Double.NaN : (double) within / arrived);
        }
        long within = 0;
        for (long w : r.withinSloBySecond) {
            within += w;
        }
        return new Outcome(tuning != null, r.arrived == 0 ? 1 : (double) within / r.arrived, phases, e.p99Ms(),
                dollars / seconds * 3600, stages);
    }
}

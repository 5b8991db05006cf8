package io.servegate.sim.pipeline;

import java.util.List;

/**
 * What the estimator found for one configuration on the sample trace.
 *
 * @param arrived queries that entered the pipeline
 * @param withinSlo queries that finished within the SLO
 * @param failed queries a stage dropped (none without deadlines or failures; kept so none goes uncounted)
 * @param p50Ms median end-to-end latency of the finished queries
 * @param p99Ms 99th percentile of the same
 * @param maxMs the slowest finished query
 * @param stages per stage, in the pipeline's order
 */
public record PipelineEstimate(long arrived, long withinSlo, long failed, double p50Ms, double p99Ms, double maxMs,
        List<StageEstimate> stages) {

    public PipelineEstimate {
        stages = List.copyOf(stages);
    }

    /**
     * One stage's share of the run.
     *
     * @param scaleFactor queries it ran per query that entered the pipeline (InferLine's s)
     * @param meanBatch its mean batch size
     * @param utilisation its replicas' busy share of the run
     * @param p99Ms 99th percentile of its own latency, from a query reaching it to its answer
     *              (queueing and service); NaN when no query reached it
     */
    public record StageEstimate(double scaleFactor, double meanBatch, double utilisation, double p99Ms) {
    }

    /** The share of queries that finished within the SLO (failed ones did not). */
    public double attainment() {
        return arrived == 0 ? 1 : (double) withinSlo / arrived;
    }
}

package io.servegate.sim;

import io.servegate.sim.pipeline.PipelineEdge;
import io.servegate.sim.pipeline.PipelineSpec;
import io.servegate.sim.workload.Workload;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.HdrHistogram.Histogram;

/**
 * Carries each query of a run through a pipeline's graph (see {@link PipelineSpec} for the rules):
 * model {@code i} of the run is stage {@code i}. Records every finished query's end-to-end
 * latency, and per second of arrival the queries that arrived and those that finished within the
 * SLO; a query that a stage dropped counts as failed.
 */
public final class PipelineRouter implements QueryRouter {

    private final int stages;
    private final int[][] out;        // per stage: outgoing edge targets
    private final double[][] outProb; // and their probabilities
    private final int[] inDegree;
    private final int[] sources;
    private List<SchedulerRun<?>> models;
    private SplittableRandom random;
    public final Histogram latency = new Histogram(3);
    public final long[] visits;
    public long arrived;
    public long failed;
    private final long sloNanos;
    /** Per second of arrival: queries that arrived, and those of them that finished within the SLO. */
    public long[] arrivedBySecond = new long[64];
    public long[] withinSloBySecond = new long[64];

    public PipelineRouter(PipelineSpec spec) {
        stages = spec.stages().size();
        out = new int[stages][];
        outProb = new double[stages][];
        inDegree = new int[stages];
        visits = new long[stages];
        for (int i = 0; i < stages; i++) {
            String name = spec.stages().get(i).name();
            List<PipelineEdge> edges = spec.edges().stream().filter(e -> e.from().equals(name)).toList();
            out[i] = edges.stream().mapToInt(e -> spec.indexOf(e.to())).toArray();
            outProb[i] = edges.stream().mapToDouble(PipelineEdge::probability).toArray();
        }
        for (PipelineEdge e : spec.edges()) {
            inDegree[spec.indexOf(e.to())]++;
        }
        sources = IntStream.range(0, stages).filter(i -> inDegree[i] == 0).toArray();
        sloNanos = Double.isNaN(spec.sloMs()) ? Long.MAX_VALUE : Math.round(spec.sloMs() * 1e6);
    }

    /** One query's progress through the graph. */
    private final class Flow {
        final long arrival;
        final int[] undecided = inDegree.clone(); // incoming edges not decided yet, per stage
        final boolean[] fed = new boolean[stages];  // some incoming edge was taken
        int open = stages;                          // stages neither run nor skipped
        public boolean failed;

        Flow(long arrival) {
            this.arrival = arrival;
        }
    }

    /** A query at one stage: what the stage's scheduler carries. */
    private record Visit(Flow flow, int stage) {
    }

    @Override
    public void attach(List<SchedulerRun<?>> runs, SplittableRandom r) {
        if (runs.size() != stages) {
            throw new IllegalArgumentException("a pipeline of " + stages + " stages needs as many models, got " + runs.size());
        }
        models = runs;
        random = r;
    }

    @Override
    public void arrived(Workload.Arrival arrival, long now) {
        arrived++;
        int second = second(now);
        if (second >= arrivedBySecond.length) {
            arrivedBySecond = Arrays.copyOf(arrivedBySecond, Math.max(second + 1, 2 * arrivedBySecond.length));
            withinSloBySecond = Arrays.copyOf(withinSloBySecond, arrivedBySecond.length);
        }
        arrivedBySecond[second]++;
        Flow f = new Flow(now);
        for (int s : sources) {
            run(f, s, now);
        }
    }

    @Override
    public void answered(SchedulerRun<?> model, Object payload, long now) {
        Visit v = (Visit) payload;
        if (!v.flow().failed) {
            decide(v.flow(), v.stage(), true, now);
        }
    }

    @Override
    public void dropped(SchedulerRun<?> model, Object payload, long now) {
        Flow f = ((Visit) payload).flow();
        if (!f.failed) {
            f.failed = true;
            failed++;
        }
    }

    private void run(Flow f, int stage, long now) {
        visits[stage]++;
        SchedulerRun<?> run = models.get(stage);
        run.submit(run.name, new Visit(f, stage), Long.MAX_VALUE, now); // no deadline: every query is measured
    }

    /** Stage {@code stage} has run ({@code ran}) or been skipped: its outgoing edges are decided. */
    private void decide(Flow f, int stage, boolean ran, long now) {
        for (int k = 0; k < out[stage].length; k++) {
            int next = out[stage][k];
            if (ran && (outProb[stage][k] >= 1 || random.nextDouble() < outProb[stage][k])) {
                f.fed[next] = true;
            }
            if (--f.undecided[next] == 0) {
                if (f.fed[next]) {
                    run(f, next, now);
                } else {
                    decide(f, next, false, now);
                }
            }
        }
        if (--f.open == 0) {
            latency.recordValue(now - f.arrival);
            if (now - f.arrival <= sloNanos) {
                withinSloBySecond[second(f.arrival)]++;
            }
        }
    }

    private static int second(long nanos) {
        return (int) (nanos / 1_000_000_000L);
    }
}

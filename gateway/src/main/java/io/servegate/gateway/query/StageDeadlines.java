package io.servegate.gateway.query;

import io.servegate.gateway.registry.PipelineEdge;
import io.servegate.gateway.registry.PipelineGraph;
import io.servegate.gateway.registry.PipelineStage;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * When each stage of a pipeline must have answered, as an offset from the query's arrival.
 * A stage's deadline is the latest end of its predecessors plus its budget, so time a stage
 * leaves unused passes on to the stages after it; the final stage's deadline is always the
 * end-to-end one (nothing after it needs time), and no deadline is later than that.
 * <ul>
 *   <li>With a plan, a model stage's budget is its {@code deadline_micros}.</li>
 *   <li>Without one, the end-to-end budget is split in proportion to the stages' profiled
 *       latencies for one query, scaled so that the slowest path through the graph uses all of
 *       it. While any stage's model has no profile yet, every model stage weighs the same.
 *       Combine stages take no time.</li>
 * </ul>
 */
public final class StageDeadlines {

    private StageDeadlines() {
    }

    /**
     * @param graph        the pipeline
     * @param budgetNanos  from arrival to the end-to-end deadline
     * @param profiled     a model stage's profiled latency in nanoseconds, or -1 when unknown
     * @return each stage's deadline offset in nanoseconds, indexed by {@link PipelineGraph#position}
     */
    public static long[] offsets(PipelineGraph graph, long budgetNanos, ToLongFunction<PipelineStage> profiled) {
        List<PipelineStage> order = graph.order();
        double[] weight = new double[order.size()];
        if (graph.planned()) {
            for (int i = 0; i < weight.length; i++) {
                weight[i] = TimeUnit.MICROSECONDS.toNanos(order.get(i).deadlineMicros());
            }
        } else {
            boolean known = true;
            for (int i = 0; i < weight.length && known; i++) {
                if (!order.get(i).isCombine()) {
                    weight[i] = profiled.applyAsLong(order.get(i));
                    known = weight[i] > 0;
                }
            }
            for (int i = 0; i < weight.length; i++) {
                weight[i] = order.get(i).isCombine() ? 0 : known ? weight[i] : 1;
            }
            double longest = max(ends(graph, weight));
            double scale = longest > 0 ? budgetNanos / longest : 0;
            for (int i = 0; i < weight.length; i++) {
                weight[i] *= scale;
            }
        }
        double[] ends = ends(graph, weight);
        long[] offsets = new long[ends.length];
        for (int i = 0; i < ends.length; i++) {
            offsets[i] = Math.min(budgetNanos, Math.round(ends[i]));
        }
        offsets[offsets.length - 1] = budgetNanos;
        return offsets;
    }

    /**
     * Each stage's own budget, the time it may take once its predecessors are done: a planned
     * stage's {@code deadline_micros}; otherwise its deadline offset less its predecessors'
     * latest (the final stage's includes what the split leaves over). Combine stages get 0.
     *
     * @param offsets {@link #offsets}'s answer for {@code graph}
     * @return nanoseconds, indexed by {@link PipelineGraph#position}
     */
    public static long[] budgets(PipelineGraph graph, long[] offsets) {
        List<PipelineStage> order = graph.order();
        long[] budgets = new long[order.size()];
        for (int i = 0; i < budgets.length; i++) {
            PipelineStage stage = order.get(i);
            if (stage.isCombine()) {
                continue;
            }
            if (graph.planned()) {
                budgets[i] = TimeUnit.MICROSECONDS.toNanos(stage.deadlineMicros());
                continue;
            }
            long start = 0;
            for (PipelineEdge e : graph.incoming(stage.name())) {
                start = Math.max(start, offsets[graph.position(e.from())]);
            }
            budgets[i] = Math.max(0, offsets[i] - start);
        }
        return budgets;
    }

    /** Each stage's end when it starts at its predecessors' latest end and takes its weight. */
    private static double[] ends(PipelineGraph graph, double[] weight) {
        List<PipelineStage> order = graph.order();
        double[] end = new double[order.size()];
        for (int i = 0; i < end.length; i++) {
            double start = 0;
            for (PipelineEdge e : graph.incoming(order.get(i).name())) {
                start = Math.max(start, end[graph.position(e.from())]);
            }
            end[i] = start + weight[i];
        }
        return end;
    }

    private static double max(double[] values) {
        double m = 0;
        for (double v : values) {
            m = Math.max(m, v);
        }
        return m;
    }
}

package io.servegate.sim;

import io.servegate.sim.workload.Workload;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Where a run's queries go: the workload's arrivals into models, and what follows when a model
 * answers or drops one. A plain run submits each arrival to the model it names and stops there;
 * a pipeline ({@link PipelineRouter}) sends a query on to the next stages of its graph.
 */
interface QueryRouter {

    /**
     * A router for a run of one scheduler per model that sends each arrival to the model it names,
     * with its deadline; nothing follows an answer.
     */
    static QueryRouter direct() {
        return new QueryRouter() {
            private List<SchedulerRun<?>> models;

            @Override
            public void attach(List<SchedulerRun<?>> runs, SplittableRandom random) {
                models = runs;
            }

            @Override
            public void arrived(Workload.Arrival arrival, long now) {
                SchedulerRun<?> run = models.get(arrival.model);
                run.submit(run.name, null, arrival.deadline, now);
            }
        };
    }

    /**
     * A router for a run of one scheduler serving many models that sends each arrival to it, for
     * the model {@link ManyModelScenario#id} names; nothing follows an answer.
     */
    static QueryRouter toModelIds() {
        return new QueryRouter() {
            private SchedulerRun<?> run;

            @Override
            public void attach(List<SchedulerRun<?>> runs, SplittableRandom random) {
                run = runs.get(0);
            }

            @Override
            public void arrived(Workload.Arrival arrival, long now) {
                run.submit(ManyModelScenario.id(arrival.model), null, arrival.deadline, now);
            }
        };
    }

    /** Called once before the first event with the run's schedulers, in the scenario's order, and a random stream of its own. */
    void attach(List<SchedulerRun<?>> runs, SplittableRandom random);

    /** A query of the workload arrives. */
    void arrived(Workload.Arrival arrival, long now);

    /** {@code model} answered the query that carried {@code payload}. */
    default void answered(SchedulerRun<?> model, Object payload, long now) {
    }

    /** The query that carried {@code payload} was answered by a batch whose time, shared by its queries, gave it {@code modelNanos}. */
    default void served(Object payload, long modelNanos) {
    }

    /** {@code model} gave the query that carried {@code payload} a default, or lost it with its replica. */
    default void dropped(SchedulerRun<?> model, Object payload, long now) {
    }
}

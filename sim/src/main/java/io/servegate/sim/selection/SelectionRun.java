package io.servegate.sim.selection;

import io.servegate.core.selection.Combined;
import io.servegate.core.selection.SelectionPolicy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * Model selection (Clipper NSDI'17 §5) in virtual time: a sequence of queries to an application
 * with linked models, answered through a core {@link SelectionPolicy}, with the models' outputs
 * taken from a {@link ModelOutputs} feedback model and immediate feedback after every query.
 *
 * <p>Per query, on the state of the query's context (or one state shared by all queries), the
 * steps the gateway's {@code SelectionService} takes:
 * <ol>
 *   <li>predict: {@code link} the state to the models, {@code select} (with the run's seeded
 *       generator), ask the selected models, {@code combine} the answers. The query is an error
 *       when the combined output (trimmed) is not the label, or when there is none (the gateway
 *       would answer the app's default);</li>
 *   <li>feedback, joined with that prediction (§5.2.1): {@code observe} the label with the
 *       outputs of the selected models that answered and the probability each was selected with
 *       under the prediction's state. Exp3 thus learns only from the model it drew, Exp4 from all.</li>
 * </ol>
 */
public final class SelectionRun {

    private final List<String> models;
    private final List<SelectionQuery> queries;
    private final ModelOutputs outputs;

    /**
     * @param models  the linked models, in link order
     * @param queries the queries, in arrival order
     * @param outputs what each model answers to each query
     */
    public SelectionRun(List<String> models, List<SelectionQuery> queries, ModelOutputs outputs) {
        this.models = List.copyOf(models);
        this.queries = List.copyOf(queries);
        this.outputs = outputs;
    }

    /** The linked models, in link order. */
    public List<String> models() {
        return models;
    }

    /** How many queries a run has. */
    public int queries() {
        return queries.size();
    }

    /**
     * Runs every query through {@code policy}.
     *
     * @param name       the curve's name
     * @param seed       seeds the policy's generator (the select draws)
     * @param perContext one state per query context (§5.3) instead of one shared state
     * @return the policy's error curve over the queries
     */
    public <S> ErrorCurve run(String name, SelectionPolicy<S> policy, long seed, boolean perContext) {
        RandomGenerator random = new SplittableRandom(seed);
        // HashMap: a context may be null.
        Map<String, S> states = new HashMap<>();
        boolean[] errors = new boolean[queries.size()];
        for (int q = 0; q < errors.length; q++) {
            SelectionQuery query = queries.get(q);
            String context = perContext ? query.context() : null;
            S state = states.get(context);
            state = policy.link(state == null ? policy.init(models) : state, models);
            Object input = query.input();

            List<String> selected = policy.select(state, input, random);
            Map<String, String> answered = new HashMap<>();
            Map<String, Double> probabilities = new HashMap<>();
            for (String m : selected) {
                String output = outputs.output(q, query, m);
                if (output != null) {
                    answered.put(m, output);
                    probabilities.put(m, policy.probability(state, m));
                }
            }
            Optional<Combined> combined = policy.combine(state, input, answered, selected);
            errors[q] = combined.isEmpty() || !combined.get().output().trim().equals(query.label());

            states.put(context, policy.observe(state, input, query.label(), answered, probabilities));
        }
        return new ErrorCurve(name, errors);
    }

    /**
     * The error curve of always answering with {@code model}'s output; no answer counts as an error.
     *
     * @throws IllegalArgumentException if {@code model} is not linked
     */
    public ErrorCurve staticModel(String model) {
        if (!models.contains(model)) {
            throw new IllegalArgumentException(model + " is not in " + models);
        }
        boolean[] errors = new boolean[queries.size()];
        for (int q = 0; q < errors.length; q++) {
            SelectionQuery query = queries.get(q);
            String output = outputs.output(q, query, model);
            errors[q] = output == null || !output.trim().equals(query.label());
        }
        return new ErrorCurve(model, errors);
    }

    /** The curves of all static models, in link order. */
    public List<ErrorCurve> staticModels() {
        List<ErrorCurve> curves = new ArrayList<>();
        for (String m : models) {
            curves.add(staticModel(m));
        }
        return curves;
    }
}

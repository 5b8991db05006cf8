package io.servegate.sim.selection;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A synthetic {@link ModelOutputs} for selection experiments without data: labels are classes
 * {@code "0".."classes-1"}, and each model answers a query correctly with its {@link Accuracy}
 * for the query's position and context, otherwise with one of the other classes, uniformly.
 *
 * <p>Each answer is drawn from a generator seeded by the seed, the query's position and the
 * model's, so it does not depend on who asks or in what order.
 */
public final class SyntheticOutputs implements ModelOutputs {

    /** How often a model is right: may change along the run and differ between contexts. */
    @FunctionalInterface
    public interface Accuracy {

        /**
         * @param index   the query's position in the run
         * @param context the query's context (may be null)
         * @return the probability of a correct answer, in {@code [0, 1]}
         */
        double at(int index, String context);

        /** The same accuracy everywhere. */
        static Accuracy constant(double p) {
            return (index, context) -> p;
        }

        /** {@code during} for the queries {@code [from, to)}, this accuracy otherwise. */
        default Accuracy except(int from, int to, double during) {
            return (index, context) -> index >= from && index < to ? during : at(index, context);
        }
    }

    private final Map<String, Integer> positions = new LinkedHashMap<>();
    private final List<Accuracy> accuracies = new ArrayList<>();
    private final int classes;
    private final long seed;

    /**
     * @param models  model name → its accuracy
     * @param classes how many classes, at least 2
     * @param seed    fixes every answer
     * @throws IllegalArgumentException if {@code classes < 2}
     */
    public SyntheticOutputs(Map<String, Accuracy> models, int classes, long seed) {
        if (classes < 2) {
            throw new IllegalArgumentException("need at least 2 classes, got " + classes);
        }
        models.forEach((name, accuracy) -> {
            positions.put(name, accuracies.size());
            accuracies.add(accuracy);
        });
        this.classes = classes;
        this.seed = seed;
    }

    /**
     * {@code n} queries with uniformly drawn labels {@code "0".."classes-1"} and contexts
     * {@code "0".."contexts-1"}; the input is the query's position.
     *
     * @param contexts how many contexts, at least 1
     */
    public static List<SelectionQuery> queries(int n, int contexts, int classes, long seed) {
        if (contexts < 1 || classes < 2) {
            throw new IllegalArgumentException("need contexts >= 1 and classes >= 2, got " + contexts + ", " + classes);
        }
        SplittableRandom random = new SplittableRandom(seed);
        List<SelectionQuery> queries = new ArrayList<>(n);
        for (int q = 0; q < n; q++) {
            String label = Integer.toString(random.nextInt(classes));
            queries.add(new SelectionQuery(q, Integer.toString(random.nextInt(contexts)), label));
        }
        return queries;
    }

    /** @throws IllegalArgumentException for an unknown model, or a label that is not one of the classes */
    @Override
    public String output(int index, SelectionQuery query, String model) {
        Integer m = positions.get(model);
        if (m == null) {
            throw new IllegalArgumentException("unknown model '" + model + "'; models: " + positions.keySet());
        }
        int label = Integer.parseInt(query.label());
        if (label < 0 || label >= classes) {
            throw new IllegalArgumentException("label " + label + " is not one of the " + classes + " classes");
        }
        // SplittableRandom mixes its seed before the first draw, so neighbouring (index, model)
        // pairs draw independently.
        SplittableRandom random = new SplittableRandom((seed * 0x9E3779B97F4A7C15L + index) * 0xBF58476D1CE4E5B9L + m);
        if (random.nextDouble() < accuracies.get(m).at(index, query.context())) {
            return query.label();
        }
        return Integer.toString((label + 1 + random.nextInt(classes - 1)) % classes);
    }
}

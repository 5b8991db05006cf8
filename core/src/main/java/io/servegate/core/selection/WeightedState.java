package io.servegate.core.selection;

import java.util.Arrays;
import java.util.List;

/**
 * The immutable state of {@link Exp3Policy} and {@link Exp4Policy}: one weight {@code s_i} per
 * linked model, plus the number of feedback observations applied.
 *
 * <p>Weights are kept in log space and normalized after every change so that the largest weight
 * is exactly {@code 1} (log-weight {@code 0}); no weight is ever allowed below
 * {@link #MIN_RELATIVE_WEIGHT} times the largest. This keeps them finite and positive however
 * many updates are applied (no underflow to 0, no overflow), and it bounds how far a model that
 * failed for a while has to climb back once it recovers (about {@code ln(10^6) / η} net losses of
 * the others, as in "fixed share" variants of the bandit algorithms). Normalization does not
 * change the policies' behaviour: only weight ratios matter.
 */
public final class WeightedState {

    /** No weight is smaller than this fraction of the largest one. */
    public static final double MIN_RELATIVE_WEIGHT = 1e-6;
    /** {@code ln(}{@link #MIN_RELATIVE_WEIGHT}{@code )}: the smallest normalized log weight. */
    public static final double MIN_LOG_WEIGHT = Math.log(MIN_RELATIVE_WEIGHT);

    private final List<String> models;
    private final double[] logWeights;
    private final long observations;

    /** Takes ownership of {@code logWeights}, which must already be {@link #normalize normalized}. */
    WeightedState(List<String> models, double[] logWeights, long observations) {
        this.models = models;
        this.logWeights = logWeights;
        this.observations = observations;
    }

    /** All models at weight 1, no observations. */
    static WeightedState uniform(List<String> models) {
        List<String> checked = Outputs.checkModels(models);
        return new WeightedState(checked, new double[checked.size()], 0);
    }

    /**
     * Shifts log-weights in place so the largest is 0 and clamps the others at
     * {@link #MIN_LOG_WEIGHT}.
     */
    static double[] normalize(double[] lw) {
        double max = Double.NEGATIVE_INFINITY;
        for (double w : lw) {
            max = Math.max(max, w);
        }
        for (int i = 0; i < lw.length; i++) {
            lw[i] = Math.max(MIN_LOG_WEIGHT, lw[i] - max);
        }
        return lw;
    }

    /**
     * This state for a new list of linked models: kept models keep their weights, new ones get
     * the arithmetic mean of the kept models' weights (1 if none is kept), dropped ones go.
     */
    WeightedState relink(List<String> newModels) {
        if (models.equals(newModels)) {
            return this;
        }
        List<String> checked = Outputs.checkModels(newModels);
        double[] lw = new double[checked.size()];
        boolean[] kept = new boolean[lw.length];
        double sum = 0;
        int n = 0;
        for (int i = 0; i < lw.length; i++) {
            int j = indexOf(checked.get(i));
            if (j >= 0) {
                lw[i] = logWeights[j];
                kept[i] = true;
                sum += Math.exp(lw[i]);
                n++;
            }
        }
        // The mean of the weights themselves, not of their logs: a new model should get the
        // selection share an average existing model has.
        double average = n == 0 ? 0.0 : Math.log(sum / n);
        for (int i = 0; i < lw.length; i++) {
            if (!kept[i]) {
                lw[i] = average;
            }
        }
        return new WeightedState(checked, normalize(lw), observations);
    }

    /** The models, in link order (unmodifiable). */
    public List<String> models() {
        return models;
    }

    /** The number of models. */
    public int size() {
        return models.size();
    }

    /** How many feedback observations were applied to this state and its predecessors. */
    public long observations() {
        return observations;
    }

    /** The position of {@code model} in {@link #models()}, or {@code -1}. */
    public int indexOf(String model) {
        return models.indexOf(model);
    }

    /**
     * @param model a linked model
     * @return its weight relative to the largest, in {@code [MIN_RELATIVE_WEIGHT, 1]}
     * @throws IllegalArgumentException if {@code model} is not in this state
     */
    public double weight(String model) {
        int i = indexOf(model);
        if (i < 0) {
            throw new IllegalArgumentException("model '" + model + "' is not in this state; models: " + models);
        }
        return Math.exp(logWeights[i]);
    }

    /** The weights, in model order, relative to the largest (which is 1). */
    public double[] weights() {
        double[] w = new double[logWeights.length];
        for (int i = 0; i < w.length; i++) {
            w[i] = Math.exp(logWeights[i]);
        }
        return w;
    }

    /** The weights, in model order, scaled to sum to 1 (empty if there are no models). */
    public double[] normalizedWeights() {
        double[] w = weights();
        double sum = 0;
        for (double x : w) {
            sum += x;
        }
        for (int i = 0; i < w.length; i++) {
            w[i] /= sum;
        }
        return w;
    }

    /** The natural-log weights, in model order (the largest is 0). */
    public double[] logWeights() {
        return logWeights.clone();
    }

    /** Internal access without a copy; callers must not modify the array. */
    double[] logWeightsUnsafe() {
        return logWeights;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WeightedState s && observations == s.observations && models.equals(s.models)
                && Arrays.equals(logWeights, s.logWeights);
    }

    @Override
    public int hashCode() {
        return (models.hashCode() * 31 + Arrays.hashCode(logWeights)) * 31 + Long.hashCode(observations);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("WeightedState[observations=").append(observations).append(", weights={");
        for (int i = 0; i < logWeights.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(models.get(i)).append('=').append(Math.exp(logWeights[i]));
        }
        return sb.append("}]").toString();
    }
}

package io.servegate.core.selection;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * Clipper's ensemble selection policy (NSDI'17, §5.2): every query goes to <em>all</em> linked
 * models and their outputs are combined with weights {@code s_i} learned by the Exp4 rule: after
 * feedback, each model that answered loses weight by its own loss, {@code s_i ← s_i ·
 * exp(−η · L_i)}.
 *
 * <h2>Combining</h2>
 * <ul>
 *   <li>{@link Task#CLASSIFICATION}: a weighted vote; outputs that are the same label (after
 *       trimming, or the same number: {@code "3"} and {@code "3.0"}) pool their weights. The
 *       winner is the label with the most weight (ties: more votes, then the label first given
 *       in {@code selected} order), reported as its heaviest voter's trimmed output.</li>
 *   <li>{@link Task#REGRESSION}: the weighted mean of the numeric outputs; a model whose output is
 *       not a number counts as not having answered.</li>
 * </ul>
 * Straggler mitigation (§5.2.2): only the outputs that arrived are combined, their weights
 * renormalized among themselves; this is what "substituting missing predictions with their
 * average" amounts to. The <em>confidence</em> (§5.2.1) is the weighted share of all
 * <em>selected</em> models that agree with the combined output (the same label, or for regression
 * within {@code tolerance} of the mean), so missing models count as disagreeing and lower it.
 *
 * <h2>Parameters</h2>
 * {@code η} (eta, default {@value #DEFAULT_ETA}) is the learning rate: with 0.1 a model that is
 * wrong while the others are right loses about 10% of its relative weight per feedback, so a
 * failing model is out-voted within a few dozen feedbacks. Thanks to the {@link WeightedState}
 * weight floor, once it recovers it climbs back to the top after at most about
 * {@code ln(10^6) / (η·Δ)} feedbacks, {@code Δ} being how much less often it is now wrong than
 * the best other model (about 900 for {@code Δ = 0.15}). For regression, {@code scale} (default {@value #DEFAULT_SCALE}) is the absolute error
 * counted as a full loss ({@code L = min(1, |y − label| / scale)}) and {@code tolerance} (default
 * {@value #DEFAULT_TOLERANCE}) the distance from the mean within which a model agrees; both are
 * in the outputs' units.
 *
 * <p>The state is a {@link WeightedState}; its {@code observations} counts feedback calls.
 */
public final class Exp4Policy implements WeightedPolicy {

    /** The registered name. */
    public static final String NAME = "exp4";
    /** Default learning rate η. */
    public static final double DEFAULT_ETA = 0.1;
    /** Default regression loss scale. */
    public static final double DEFAULT_SCALE = 1.0;
    /** Default regression agreement tolerance. */
    public static final double DEFAULT_TOLERANCE = 0.1;

    private static final StateCodec<WeightedState> CODEC = new WeightedStateCodec('4', NAME);

    private final double eta;
    private final Task task;
    private final double tolerance;
    private final double scale;

    /** Exp4 for classification with the default η. */
    public Exp4Policy() {
        this(DEFAULT_ETA, Task.CLASSIFICATION, DEFAULT_TOLERANCE, DEFAULT_SCALE);
    }

    /**
     * @param eta       learning rate η, finite and {@code > 0}
     * @param task      classification (vote) or regression (mean)
     * @param tolerance for regression: how far from the combined mean an output may be and still
     *                  agree with it, finite and {@code >= 0}; unused for classification
     * @param scale     for regression: the absolute error counted as a full loss, finite and
     *                  {@code > 0}; unused for classification
     * @throws IllegalArgumentException if an argument is out of range
     */
    public Exp4Policy(double eta, Task task, double tolerance, double scale) {
        Outputs.checkPositiveFinite("eta", eta);
        if (task == null) {
            throw new IllegalArgumentException("task must not be null");
        }
        if (!(tolerance >= 0.0 && Double.isFinite(tolerance))) {
            throw new IllegalArgumentException("tolerance must be finite and >= 0, got " + tolerance);
        }
        Outputs.checkPositiveFinite("scale", scale);
        this.eta = eta;
        this.task = task;
        this.tolerance = tolerance;
        this.scale = scale;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public WeightedState init(List<String> models) {
        return WeightedState.uniform(models);
    }

    @Override
    public WeightedState link(WeightedState state, List<String> models) {
        return Objects.requireNonNull(state, "state").relink(models);
    }

    @Override
    public List<String> models(WeightedState state) {
        return state.models();
    }

    /** All linked models. */
    @Override
    public List<String> select(WeightedState state, Object input, RandomGenerator random) {
        return state.models();
    }

    @Override
    public Optional<Combined> combine(WeightedState state, Object input, Map<String, String> outputs,
                                      List<String> selected) {
        if (outputs == null || selected == null) {
            throw new IllegalArgumentException("outputs and selected must not be null");
        }
        List<String> models = selected.stream().distinct().toList();
        double[] w = weightsOf(state, models);
        double total = 0;
        for (double x : w) {
            total += x;
        }
        return task == Task.CLASSIFICATION
                ? vote(models, w, total, outputs)
                : mean(models, w, total, outputs);
    }

    /** A selected model's weight; one the state does not know gets the average, as when linked. */
    private static double[] weightsOf(WeightedState state, List<String> models) {
        double[] all = state.weights();
        double average = 1.0;
        if (all.length > 0) {
            double sum = 0;
            for (double x : all) {
                sum += x;
            }
            average = sum / all.length;
        }
        double[] w = new double[models.size()];
        for (int i = 0; i < w.length; i++) {
            int j = state.indexOf(models.get(i));
            w[i] = j >= 0 ? all[j] : average;
        }
        return w;
    }

    private static final class Votes {
        double weight;
        int count;
        String representative;
        double representativeWeight = -1;
    }

    private static Optional<Combined> vote(List<String> models, double[] w, double total,
                                           Map<String, String> outputs) {
        // Insertion order = link order, so the first-seen label wins exact ties.
        Map<Object, Votes> byLabel = new LinkedHashMap<>();
        int answered = 0;
        for (int i = 0; i < w.length; i++) {
            String o = outputs.get(models.get(i));
            if (o == null) {
                continue;
            }
            answered++;
            Votes v = byLabel.computeIfAbsent(Outputs.labelKey(o), k -> new Votes());
            v.weight += w[i];
            v.count++;
            if (w[i] > v.representativeWeight) {
                v.representative = o.trim();
                v.representativeWeight = w[i];
            }
        }
        Votes best = null;
        for (Votes v : byLabel.values()) {
            if (best == null || v.weight > best.weight || (v.weight == best.weight && v.count > best.count)) {
                best = v;
            }
        }
        if (best == null) {
            return Optional.empty();
        }
        return Optional.of(new Combined(best.representative, share(best.weight, total), answered, w.length));
    }

    private Optional<Combined> mean(List<String> models, double[] w, double total, Map<String, String> outputs) {
        double[] y = new double[w.length];
        boolean[] usable = new boolean[w.length];
        double sum = 0;
        double weight = 0;
        int answered = 0;
        for (int i = 0; i < w.length; i++) {
            Double v = Outputs.number(outputs.get(models.get(i)));
            if (v != null) {
                usable[i] = true;
                y[i] = v;
                sum += w[i] * v;
                weight += w[i];
                answered++;
            }
        }
        if (answered == 0) {
            return Optional.empty();
        }
        double mean = sum / weight;
        double agreeing = 0;
        for (int i = 0; i < w.length; i++) {
            if (usable[i] && Math.abs(y[i] - mean) <= tolerance) {
                agreeing += w[i];
            }
        }
        return Optional.of(new Combined(Double.toString(mean), share(agreeing, total), answered, w.length));
    }

    /** {@code part / total} clamped to [0, 1] against rounding. */
    private static double share(double part, double total) {
        return Math.min(1.0, Math.max(0.0, part / total));
    }

    /**
     * Applies {@code s_i ← s_i · exp(−η · L_i)} to each linked model present in {@code outputs};
     * models without an output (stragglers) are unchanged.
     */
    @Override
    public WeightedState observe(WeightedState state, Object input, String label, Map<String, String> outputs) {
        return step(input, label, outputs, Map.of()).applyTo(state);
    }

    /** {@code η · L_i} for each model of {@code outputs}; Exp4 is not importance-weighted. */
    @Override
    public WeightedStep step(Object input, String label, Map<String, String> outputs,
                             Map<String, Double> probabilities) {
        Outputs.requireLabel(label);
        if (outputs == null) {
            throw new IllegalArgumentException("outputs must not be null");
        }
        if (task == Task.REGRESSION) {
            Outputs.requireNumericLabel(label);
        }
        Map<String, Double> decrements = new HashMap<>();
        outputs.forEach((m, output) -> {
            if (output != null) {
                decrements.put(m, eta * Outputs.loss(task, output, label, scale));
            }
        });
        return new WeightedStep(decrements);
    }

    @Override
    public StateCodec<WeightedState> codec() {
        return CODEC;
    }

    /** The learning rate η. */
    public double eta() {
        return eta;
    }

    /** Classification or regression. */
    public Task task() {
        return task;
    }

    /** The regression agreement tolerance. */
    public double tolerance() {
        return tolerance;
    }

    /** The regression loss scale. */
    public double scale() {
        return scale;
    }

    @Override
    public String toString() {
        return "Exp4Policy[eta=" + eta + ", task=" + task
                + (task == Task.REGRESSION ? ", tolerance=" + tolerance + ", scale=" + scale : "") + "]";
    }
}

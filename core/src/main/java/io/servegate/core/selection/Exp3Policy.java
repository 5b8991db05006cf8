package io.servegate.core.selection;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * Clipper's single-model selection policy (NSDI'17, §5.1): the Exp3 bandit algorithm of Auer et
 * al. Each query goes to <em>one</em> model, drawn at random with probability
 *
 * <pre>  p_i = (1 − γ) · s_i / Σ_j s_j + γ / K</pre>
 *
 * where {@code s_i} are the learned weights (all 1 initially) and {@code K} the number of linked
 * models. Feedback with loss {@code L ∈ [0, 1]} for the model that answered updates its weight
 * by the importance-weighted rule {@code s_i ← s_i · exp(−η · L / p_i)}; models that were not
 * queried are unchanged. {@code p_i} is the probability the model was drawn with for the query the
 * feedback is about (§5.2.1), which the gateway records with each prediction.
 *
 * <ul>
 *   <li>{@code η} (eta, default {@value #DEFAULT_ETA}) is the learning rate: how quickly the
 *       policy reacts to feedback. A wrong answer costs the model a factor {@code exp(−η/p_i)};
 *       because of the {@code 1/p_i}, a model loses on average {@code η} log-weight per
 *       <em>query</em> times its error rate, however rarely it is chosen. With 0.1, a model
 *       that fails is abandoned within tens of queries, while one unlucky answer of a
 *       frequently chosen model moves it by only about 10%.</li>
 *   <li>{@code γ} (gamma, default {@value #DEFAULT_GAMMA}) is the share of queries spread
 *       uniformly over all models. It is the probability floor {@code γ/K}: every model keeps
 *       being tried, so one that recovers is noticed, and the importance weight {@code 1/p_i}
 *       (hence one update's step) stays bounded by {@code K/γ}. {@code γ < 0.1} keeps the floor
 *       below {@code 1/(10K)}, so a useless model's share can fall below a tenth of uniform;
 *       0.05 puts it at half of that. {@code γ = 0} is Clipper's original rule without mixing
 *       (the {@link WeightedState} weight floor still keeps every {@code p_i > 0}).</li>
 * </ul>
 *
 * <p>The state is a {@link WeightedState}; its {@code observations} counts feedback calls.
 */
public final class Exp3Policy implements WeightedPolicy {

    /** The registered name. */
    public static final String NAME = "exp3";
    /** Default learning rate η. */
    public static final double DEFAULT_ETA = 0.1;
    /** Default uniform-exploration share γ. */
    public static final double DEFAULT_GAMMA = 0.05;
    /** Default loss scale for {@link Task#REGRESSION}. */
    public static final double DEFAULT_SCALE = 1.0;

    private static final StateCodec<WeightedState> CODEC = new WeightedStateCodec('3', NAME);

    private final double eta;
    private final double gamma;
    private final Task task;
    private final double scale;

    /** Exp3 for classification with the default η and γ. */
    public Exp3Policy() {
        this(DEFAULT_ETA, DEFAULT_GAMMA, Task.CLASSIFICATION, DEFAULT_SCALE);
    }

    /**
     * @param eta   learning rate η, finite and {@code > 0}
     * @param gamma uniform-exploration share γ, in {@code [0, 1)}
     * @param task  how losses are measured
     * @param scale for {@link Task#REGRESSION}: the absolute error that counts as a full loss
     *              ({@code L = min(1, |y − label| / scale)}), finite and {@code > 0}; unused for
     *              classification
     * @throws IllegalArgumentException if an argument is out of range
     */
    public Exp3Policy(double eta, double gamma, Task task, double scale) {
        Outputs.checkPositiveFinite("eta", eta);
        // Also rejects NaN.
        if (!(gamma >= 0.0 && gamma < 1.0)) {
            throw new IllegalArgumentException("gamma must be in [0, 1), got " + gamma);
        }
        if (task == null) {
            throw new IllegalArgumentException("task must not be null");
        }
        Outputs.checkPositiveFinite("scale", scale);
        this.eta = eta;
        this.gamma = gamma;
        this.task = task;
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

    /**
     * The selection probabilities {@code p_i}, in model order; they sum to 1 and each is at least
     * {@code γ/K}.
     */
    public double[] probabilities(WeightedState state) {
        double[] p = state.normalizedWeights();
        double uniform = gamma / p.length;
        for (int i = 0; i < p.length; i++) {
            p[i] = (1.0 - gamma) * p[i] + uniform;
        }
        return p;
    }

    /**
     * @return the probability that {@link #select} picks {@code model}
     * @throws IllegalArgumentException if {@code model} is not in the state
     */
    @Override
    public double probability(WeightedState state, String model) {
        int i = state.indexOf(model);
        if (i < 0) {
            throw new IllegalArgumentException("model '" + model + "' is not in this state; models: " + state.models());
        }
        return probabilities(state)[i];
    }

    @Override
    public List<String> select(WeightedState state, Object input, RandomGenerator random) {
        if (state.size() == 0) {
            return List.of();
        }
        double[] p = probabilities(state);
        double u = random.nextDouble();
        double cumulative = 0;
        for (int i = 0; i < p.length - 1; i++) {
            cumulative += p[i];
            if (u < cumulative) {
                return List.of(state.models().get(i));
            }
        }
        // Also catches u just below 1 when rounding left the cumulative sum slightly short.
        return List.of(state.models().get(p.length - 1));
    }

    /** The output of the (normally only) selected model; confidence 1. */
    @Override
    public Optional<Combined> combine(WeightedState state, Object input, Map<String, String> outputs,
                                      List<String> selected) {
        return SingleModelPolicy.firstAnswer(outputs, selected);
    }

    /**
     * Applies {@code s_i ← s_i · exp(−η · L_i / p_i)} to each linked model present in
     * {@code outputs}, with {@code p_i} from {@code state}. Normally that is the one model
     * {@link #select} chose; if several are present each is updated as if it alone had been
     * selected.
     */
    @Override
    public WeightedState observe(WeightedState state, Object input, String label, Map<String, String> outputs) {
        return observe(state, input, label, outputs, Map.of());
    }

    /**
     * As {@link #observe(WeightedState, Object, String, Map)}, with {@code p_i} the probability
     * the model was drawn with for the prediction the feedback is about, where known.
     */
    @Override
    public WeightedState observe(WeightedState state, Object input, String label, Map<String, String> outputs,
                                 Map<String, Double> probabilities) {
        if (outputs == null || probabilities == null) {
            throw new IllegalArgumentException("outputs and probabilities must not be null");
        }
        double[] current = null;
        Map<String, String> known = new HashMap<>();
        Map<String, Double> p = new HashMap<>();
        List<String> models = state.models();
        for (int i = 0; i < models.size(); i++) {
            String m = models.get(i);
            String output = outputs.get(m);
            if (output != null) {
                Double recorded = probabilities.get(m);
                if (recorded == null && current == null) {
                    current = probabilities(state);
                }
                known.put(m, output);
                p.put(m, recorded != null ? recorded : current[i]);
            }
        }
        return step(input, label, known, p).applyTo(state);
    }

    /** {@code −ln} of the factor {@code exp(−η · L_i / p_i)} for each model of {@code outputs}. */
    @Override
    public WeightedStep step(Object input, String label, Map<String, String> outputs,
                             Map<String, Double> probabilities) {
        Outputs.requireLabel(label);
        if (outputs == null || probabilities == null) {
            throw new IllegalArgumentException("outputs and probabilities must not be null");
        }
        if (task == Task.REGRESSION) {
            Outputs.requireNumericLabel(label);
        }
        Map<String, Double> decrements = new HashMap<>();
        outputs.forEach((m, output) -> {
            if (output == null) {
                return;
            }
            Double p = probabilities.get(m);
            // Also rejects NaN.
            if (p == null || !(p > 0.0 && p <= 1.0)) {
                throw new IllegalArgumentException("the probability model '" + m
                        + "' was selected with must be in (0, 1], got " + p);
            }
            decrements.put(m, eta * Outputs.loss(task, output, label, scale) / p);
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

    /** The uniform-exploration share γ. */
    public double gamma() {
        return gamma;
    }

    /** How losses are measured. */
    public Task task() {
        return task;
    }

    /** The regression loss scale. */
    public double scale() {
        return scale;
    }

    @Override
    public String toString() {
        return "Exp3Policy[eta=" + eta + ", gamma=" + gamma + ", task=" + task
                + (task == Task.REGRESSION ? ", scale=" + scale : "") + "]";
    }
}

package io.servegate.core.selection;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * A model selection policy (Clipper, NSDI'17, §5, Listing 2): decides which of an application's
 * linked models to query, combines their outputs, and learns from feedback.
 *
 * <p>Implementations are stateless and thread-safe: everything learned lives in the immutable
 * state {@code S}, which the gateway keeps per application and per context (§5.3) in a
 * selection state store (the gateway's {@code SelectionStateStore}), serialized with {@link #codec()}. Every method is a pure function
 * of its arguments (randomness comes only from the {@link RandomGenerator} passed in) and does no
 * I/O, so a state update can be retried safely under optimistic concurrency.
 *
 * <p>Models are identified by name; the order of the linked models is significant (the first one
 * is the default of {@link SingleModelPolicy}).
 *
 * @param <S> the immutable state type
 */
public interface SelectionPolicy<S> {

    /** The policy's registered name, e.g. {@code "exp4"} (see {@link SelectionPolicies}). */
    String name();

    /**
     * The initial state for an application whose linked models are {@code models}.
     *
     * @param models linked model names, in link order; no nulls, blanks or duplicates; may be empty
     * @return the initial state
     * @throws IllegalArgumentException if {@code models} is invalid
     */
    S init(List<String> models);

    /**
     * Brings a state up to date with the application's <em>current</em> linked models (the full
     * list, not only the newly linked ones): models still linked keep what was learned about
     * them, newly linked models start at the current <em>average</em> weight of the kept ones,
     * and models no longer linked are dropped. The state's model order becomes the order of
     * {@code models}. Idempotent; returns {@code state} itself when nothing changes, so callers
     * can skip a write.
     *
     * @param state  the current state
     * @param models linked model names, in link order; no nulls, blanks or duplicates; may be empty
     * @return the updated state
     * @throws IllegalArgumentException if {@code models} is invalid
     */
    S link(S state, List<String> models);

    /**
     * The models a state is about, in link order.
     *
     * @param state a state of this policy
     * @return an unmodifiable list
     */
    List<String> models(S state);

    /**
     * Which models to query for one input.
     *
     * @param state  the current state
     * @param input  the query input (may be null; the built-in policies ignore it)
     * @param random the source of randomness, for deterministic tests
     * @return the models to query, a subset of {@link #models}; empty if none are linked
     */
    List<String> select(S state, Object input, RandomGenerator random);

    /**
     * Combines the outputs that arrived in time (§5.2.2: at the latency deadline, stragglers are
     * simply missing from {@code outputs}).
     *
     * @param state    the state {@code selected} was chosen with
     * @param input    the query input (may be null)
     * @param outputs  model name → output, only for the models that answered; outputs of models
     *                 not in {@code selected} are ignored
     * @param selected the models {@link #select} chose
     * @return the combined prediction, or empty if no selected model answered usably (the caller
     *         then falls back to the application's default output)
     */
    Optional<Combined> combine(S state, Object input, Map<String, String> outputs, List<String> selected);

    /**
     * Learns from feedback about one input.
     *
     * @param state   the current state
     * @param input   the query input (may be null)
     * @param label   the true output for {@code input}
     * @param outputs model name → that model's prediction for {@code input}; entries for models
     *                the state does not know are ignored
     * @return the new state
     * @throws IllegalArgumentException if {@code label} is null, or unusable for the policy's task
     */
    S observe(S state, Object input, String label, Map<String, String> outputs);

    /**
     * The probability with which {@link #select} chooses {@code model} in {@code state}, for
     * joining feedback with the prediction it was drawn for (§5.2.1). The default, 1, is right
     * for policies whose selection is not random.
     *
     * @param state a state of this policy
     * @param model a model {@link #select} chose in {@code state}
     * @return the probability, in {@code (0, 1]}
     */
    default double probability(S state, String model) {
        return 1.0;
    }

    /**
     * Learns from feedback about a prediction already made (§5.2.1): {@code outputs} are the
     * answers of the models {@link #select} chose for it, and {@code probabilities} the
     * {@link #probability} each was chosen with, under the state the prediction was made with,
     * which may be older than {@code state}. A policy that importance-weights its update (Exp3)
     * uses these probabilities; the default ignores them.
     *
     * @param state         the current state
     * @param input         the query input (may be null)
     * @param label         the true output for {@code input}
     * @param outputs       model name → its prediction for {@code input}
     * @param probabilities model name → the probability it was selected with; a model of
     *                      {@code outputs} that is missing here gets its probability in {@code state}
     * @return the new state
     * @throws IllegalArgumentException if {@code label} is null, or unusable for the policy's task
     */
    default S observe(S state, Object input, String label, Map<String, String> outputs,
                      Map<String, Double> probabilities) {
        return observe(state, input, label, outputs);
    }

    /** The serialization of this policy's state. */
    StateCodec<S> codec();
}

/**
 * Clipper's model selection layer (NSDI'17, §5): which of an application's linked models to
 * query, how to combine their outputs, and how to learn from feedback.
 *
 * <ul>
 *   <li>{@link io.servegate.core.selection.SelectionPolicy} — the select / combine / observe
 *       SPI of Clipper's Listing 2 over an immutable, serializable state; built in:
 *       {@link io.servegate.core.selection.SingleModelPolicy} (default),
 *       {@link io.servegate.core.selection.Exp3Policy} and
 *       {@link io.servegate.core.selection.Exp4Policy}, created by name with
 *       {@link io.servegate.core.selection.SelectionPolicies}.</li>
 *   <li>{@link io.servegate.core.selection.WeightedPolicy} — Exp3 and Exp4, whose observation
 *       of a prediction already made is a state-independent
 *       {@link io.servegate.core.selection.WeightedStep}, so a store can apply it where the
 *       state lives.</li>
 *   <li>the gateway's {@code SelectionStateStore} keeps each app's (and context's) state, versioned
 *       with compare-and-set, in memory or in Redis.</li>
 * </ul>
 *
 * <p>Policies are pure: no I/O, no clocks, randomness only from an injected generator.
 */
package io.servegate.core.selection;

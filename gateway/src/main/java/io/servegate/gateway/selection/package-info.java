/**
 * Clipper's model selection layer (NSDI'17, §5): which of an application's linked models to
 * query, how to combine their outputs, and how to learn from feedback.
 *
 * <ul>
 *   <li>{@link io.servegate.gateway.selection.SelectionPolicy} — the select / combine / observe
 *       SPI of Clipper's Listing 2 over an immutable, serializable state; built in:
 *       {@link io.servegate.gateway.selection.SingleModelPolicy} (default),
 *       {@link io.servegate.gateway.selection.Exp3Policy} and
 *       {@link io.servegate.gateway.selection.Exp4Policy}, created by name with
 *       {@link io.servegate.gateway.selection.SelectionPolicies}.</li>
 *   <li>{@link io.servegate.gateway.selection.SelectionStateStore} — versioned per-app, per-context
 *       state with compare-and-set and an optimistic {@code update}, in memory or in Redis.</li>
 * </ul>
 *
 * <p>Policies are pure: no I/O, no clocks, randomness only from an injected generator.
 */
package io.servegate.gateway.selection;

/**
 * Safe rollouts of a new model version: a {@link io.servegate.core.rollout.Rollout} (shadow or
 * canary, guards, steps, history), the decision rule of
 * {@link io.servegate.core.rollout.RolloutDecider} over confidence bounds from
 * {@link io.servegate.core.rollout.GuardCheck}, and the sticky per-user
 * {@link io.servegate.core.rollout.StickyAssignment}. Pure: the gateway and the simulator supply
 * the clock and the evidence.
 */
package io.servegate.core.rollout;

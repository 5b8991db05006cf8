package io.servegate.core.rollout;

/**
 * One guard evaluated: the observed value, its confidence bounds and the verdict.
 *
 * @param guard   the guard's name ({@code slo_miss_increase}, {@code error_rate}, {@code loss_increase})
 * @param value   the observed value (NaN without evidence)
 * @param lower   its lower confidence bound
 * @param upper   its upper confidence bound
 * @param limit   the guard's limit
 * @param verdict {@link GuardVerdict#BREACHED} when {@code lower > limit}, {@link GuardVerdict#HOLDS}
 *                when {@code upper <= limit}, else undecided
 */
public record GuardValue(String guard, double value, double lower, double upper, double limit, GuardVerdict verdict) {

    static GuardValue of(String guard, double value, double lower, double upper, double limit, boolean enough) {
        GuardVerdict v = !enough ? GuardVerdict.UNDECIDED
                : lower > limit ? GuardVerdict.BREACHED
                : upper <= limit ? GuardVerdict.HOLDS
                : GuardVerdict.UNDECIDED;
        return new GuardValue(guard, value, lower, upper, limit, v);
    }

    /** @return e.g. {@code slo_miss_increase 0.052 in [0.031, 0.083] > 0.010} */
    public String describe() {
        String rel = verdict == GuardVerdict.BREACHED ? ">" : verdict == GuardVerdict.HOLDS ? "<=" : "vs";
        return String.format(java.util.Locale.ROOT, "%s %.4f in [%.4f, %.4f] %s %.4f", guard, value, lower, upper,
                rel, limit);
    }
}

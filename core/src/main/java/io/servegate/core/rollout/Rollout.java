package io.servegate.core.rollout;

import io.servegate.core.selection.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A rollout of a model's candidate version against its baseline (the version that was current
 * when it started): its definition, its state and its history. Immutable; every change returns a
 * new rollout with one more {@link Decision}.
 *
 * <p>The candidate's share is the step's fraction while the rollout runs or is paused, 1 once
 * promoted and 0 while it warms up and once rolled back, passed (shadow) or aborted. In shadow
 * mode the share is the fraction of queries copied to the candidate; users never get its answers.
 * While it warms up ({@link Guards#warmupQueries}), any query may be copied to the candidate and
 * no answer of it counts.
 *
 * @param id                  unique name, part of every sticky assignment's hash
 * @param model               the model's name
 * @param candidate           the version rolled out
 * @param baseline            the version users had before
 * @param mode                shadow or canary
 * @param task                how feedback losses are measured
 * @param scale               the regression loss scale (1 for classification)
 * @param guards              limits and confidence
 * @param steps               the candidate's shares, increasing, each in {@code (0, 1]}; a shadow has one
 * @param stepIndex           the current step
 * @param warming             whether the candidate is still warming up: the first step has not begun
 * @param status              where the rollout is
 * @param stepStartedAtMillis when the current step began
 * @param stepStartQueries    the candidate's query count when it began
 * @param history             every decision, oldest first
 */
public record Rollout(String id, String model, String candidate, String baseline, RolloutMode mode, Task task,
        double scale, Guards guards, List<Double> steps, int stepIndex, boolean warming, RolloutStatus status,
        long stepStartedAtMillis, long stepStartQueries, List<Decision> history) {

    /** The canary steps used when none are given: 1 %, 5 %, 25 %, 50 %, then all. */
    public static final List<Double> DEFAULT_STEPS = List.of(0.01, 0.05, 0.25, 0.5, 1.0);

    public Rollout {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(candidate, "candidate");
        Objects.requireNonNull(baseline, "baseline");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(guards, "guards");
        Objects.requireNonNull(status, "status");
        steps = List.copyOf(steps);
        history = List.copyOf(history);
        if (candidate.equals(baseline)) {
            throw new IllegalArgumentException("the candidate version '" + candidate + "' is the current version");
        }
        if (steps.isEmpty() || (mode == RolloutMode.SHADOW && steps.size() != 1)) {
            throw new IllegalArgumentException(mode == RolloutMode.SHADOW
                    ? "a shadow rollout has one fraction of queries to copy" : "a canary needs at least one step");
        }
        double prev = 0;
        for (double s : steps) {
            if (!(s > prev && s <= 1)) {
                throw new IllegalArgumentException("steps must increase within (0, 1], were " + steps);
            }
            prev = s;
        }
        if (stepIndex < 0 || stepIndex >= steps.size()) {
            throw new IllegalArgumentException("step " + stepIndex + " out of " + steps.size());
        }
        if (warming && stepIndex != 0) {
            throw new IllegalArgumentException("a rollout warms up before its first step, not at step " + stepIndex);
        }
        if (!(scale > 0)) {
            throw new IllegalArgumentException("scale must be positive, was " + scale);
        }
    }

    /**
     * A new running rollout with a {@link DecisionKind#START} entry: warming its candidate up when
     * the guards ask for warm-up copies, else at its first step.
     */
    public static Rollout start(String id, String model, String candidate, String baseline, RolloutMode mode,
            Task task, double scale, Guards guards, List<Double> steps, long nowMillis) {
        boolean warming = guards.warmupQueries() > 0;
        Rollout r = new Rollout(id, model, candidate, baseline, mode, task, scale, guards, steps, 0, warming,
                RolloutStatus.RUNNING, nowMillis, 0, List.of());
        return r.with(DecisionKind.START, RolloutStatus.RUNNING, 0, warming, nowMillis, 0,
                mode.name().toLowerCase(java.util.Locale.ROOT) + " of " + model + ":" + candidate + " against "
                        + baseline + ", steps " + steps
                        + (warming ? ", after " + guards.warmupQueries() + " warm-up copies" : ""));
    }

    /** @return the candidate's current share of queries (copies, in shadow mode) */
    public double share() {
        return switch (status) {
            case RUNNING, PAUSED -> warming ? 0.0 : steps.get(stepIndex);
            case PROMOTED -> 1.0;
            default -> 0.0;
        };
    }

    /** @return whether this query's user is served by (or, in shadow mode, copied to) the candidate */
    public boolean routesToCandidate(String uid) {
        return StickyAssignment.onCandidate(id, uid, share());
    }

    /** @return paused, or this rollout if it is not running */
    public Rollout pause(long nowMillis) {
        return status != RolloutStatus.RUNNING ? this
                : with(DecisionKind.PAUSE, RolloutStatus.PAUSED, stepIndex, warming, nowMillis, stepStartQueries,
                        "operator");
    }

    /** @return running again (the step's clock restarts), or this rollout if it is not paused */
    public Rollout resume(long nowMillis, long candidateQueries) {
        return status != RolloutStatus.PAUSED ? this
                : with(DecisionKind.RESUME, RolloutStatus.RUNNING, stepIndex, warming, nowMillis, candidateQueries,
                        "operator");
    }

    /** @return aborted, or this rollout if it is already final */
    public Rollout abort(long nowMillis, String reason) {
        return status.isFinal() ? this
                : with(DecisionKind.ABORT, RolloutStatus.ABORTED, stepIndex, false, nowMillis, stepStartQueries,
                        reason);
    }

    /** The same rollout after one more decision; a final status ends any warm-up. */
    Rollout with(DecisionKind kind, RolloutStatus next, int nextStep, boolean stillWarming, long nowMillis,
            long startQueries, String reason) {
        double from = history.isEmpty() ? 0 : share();
        boolean w = stillWarming && !next.isFinal();
        Rollout r = new Rollout(id, model, candidate, baseline, mode, task, scale, guards, steps, nextStep, w, next,
                nowMillis, startQueries, history);
        List<Decision> h = new ArrayList<>(history);
        h.add(new Decision(nowMillis, kind, from, r.share(), reason));
        return new Rollout(id, model, candidate, baseline, mode, task, scale, guards, steps, nextStep, w, next,
                nowMillis, startQueries, h);
    }
}

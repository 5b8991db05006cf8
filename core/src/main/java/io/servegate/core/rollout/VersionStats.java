package io.servegate.core.rollout;

/**
 * What was observed of one version during a rollout: queries it answered, how many of them missed
 * the app's SLO (or got the default), failed in the container, were compared with the other
 * version's answer (shadow) and agreed, and the feedback losses on its answers.
 *
 * @param queries    queries the version answered (or was sent, for a shadow copy)
 * @param sloMisses  of those, answers later than the SLO or replaced by the default
 * @param errors     of those, container or transport errors
 * @param compared   answers compared with the other version's on the same input
 * @param agreements of those, equal answers
 * @param feedback   feedback labels joined to this version's answers
 * @param lossSum    the sum of their losses, each in {@code [0, 1]}
 */
public record VersionStats(long queries, long sloMisses, long errors, long compared, long agreements, long feedback,
        double lossSum) {

    /** Nothing observed. */
    public static final VersionStats EMPTY = new VersionStats(0, 0, 0, 0, 0, 0, 0.0);

    public VersionStats {
        if (queries < 0 || sloMisses < 0 || errors < 0 || compared < 0 || agreements < 0 || feedback < 0
                || !(lossSum >= 0)) {
            throw new IllegalArgumentException("version statistics must not be negative");
        }
    }

    /** @return these statistics with one more query */
    public VersionStats withQuery(boolean sloMiss, boolean error) {
        return new VersionStats(queries + 1, sloMisses + (sloMiss ? 1 : 0), errors + (error ? 1 : 0), compared,
                agreements, feedback, lossSum);
    }

    /** @return these statistics with one more comparison of answers */
    public VersionStats withComparison(boolean agreed) {
        return new VersionStats(queries, sloMisses, errors, compared + 1, agreements + (agreed ? 1 : 0), feedback,
                lossSum);
    }

    /** @return these statistics with one more feedback loss, in {@code [0, 1]} */
    public VersionStats withFeedback(double loss) {
        if (!(loss >= 0 && loss <= 1)) {
            throw new IllegalArgumentException("loss must be in [0, 1], was " + loss);
        }
        return new VersionStats(queries, sloMisses, errors, compared, agreements, feedback + 1, lossSum + loss);
    }

    /** @return the sum of both (counters kept apart, e.g. by several gateways) */
    public VersionStats plus(VersionStats o) {
        return new VersionStats(queries + o.queries, sloMisses + o.sloMisses, errors + o.errors,
                compared + o.compared, agreements + o.agreements, feedback + o.feedback, lossSum + o.lossSum);
    }

    /** @return the mean feedback loss, or NaN without feedback */
    public double meanLoss() {
        return feedback == 0 ? Double.NaN : lossSum / feedback;
    }
}

package io.servegate.gateway.autoscaling;

import io.servegate.core.autoscaling.AutoscalerConfig;
import io.servegate.core.autoscaling.ScalingDecision;
import java.util.List;

/**
 * A model version's autoscaler as {@code get_autoscaling} reports it.
 *
 * @param replicas       replicas asked of the container manager
 * @param lastBadRate    the bad rate of the last tick
 * @param acting         whether a scale action is under way
 * @param retryingTo     the replica count a failed action is being retried for; null when none
 * @param failuresInARow failed actions since the last that succeeded
 * @param lastError      the last failure's cause; null when none
 * @param decisions      the last decisions, oldest first
 */
public record AutoscalingView(String model, String version, AutoscalerConfig config, int replicas,
        double lastBadRate, boolean acting, Integer retryingTo, int failuresInARow, String lastError,
        List<Entry> decisions) {

    /**
     * A decision and what became of it.
     *
     * @param outcome {@code pending}, {@code applied}, or {@code failed: cause (retry n in t ms)}
     */
    public record Entry(ScalingDecision decision, long atEpochMillis, String outcome) {
    }
}

package io.servegate.sim;

import io.servegate.core.autoscaling.AutoscalerConfig;
import java.util.Objects;

/**
 * A model's autoscaler in a run: the core's {@link io.servegate.core.autoscaling.Autoscaler}
 * with this configuration, asked once per tick; a replica it adds is like the model's first
 * and takes {@code startNanos} to join (a container starting, then its readiness check).
 *
 * @param config     the autoscaler's configuration
 * @param startNanos from a scale-up to the new replica taking batches
 * @param tickNanos  how often the autoscaler decides
 */
public record Autoscaling(AutoscalerConfig config, long startNanos, long tickNanos) {

    public Autoscaling {
        Objects.requireNonNull(config, "config");
        if (startNanos < 0 || tickNanos <= 0) {
            throw new IllegalArgumentException("start must be >= 0 and tick > 0");
        }
    }
}

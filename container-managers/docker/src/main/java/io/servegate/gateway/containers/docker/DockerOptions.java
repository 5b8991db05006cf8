package io.servegate.gateway.containers.docker;

import io.servegate.gateway.containers.RestartPolicy;
import java.time.Duration;

/**
 * How the Docker manager runs and watches containers.
 *
 * @param network          {@code host} (containers share the host's network) or the name of a
 *                         Docker network; then the container listens on {@code containerPort}
 *                         and that port is published on 127.0.0.1
 * @param containerPort    the port a container listens on in a non-host network
 * @param restartPolicy    Docker's {@code always}, {@code on-failure} (with {@code maxRestarts}) or {@code no}
 *                         ({@link RestartPolicy#NEVER}); also whether an unready replica is replaced
 * @param maxRestarts      the retry limit of {@code on-failure} (0 = unlimited)
 * @param pollInterval     how often container states are checked
 * @param checkTimeout     how long one readiness check may take
 * @param failureThreshold failed checks in a row before a ready replica is unregistered
 * @param readinessTimeout a replica not ready for this long (after its start or its failed checks),
 *                         running or restarted by Docker again and again, is replaced by a new
 *                         container on a fresh port, unless the restart policy is {@code never}
 * @param stopTimeout      how long a stopped container may drain before it is killed
 * @param owner            value of the {@code servegate.owner} label: which manager's containers
 *                         are cleaned at start
 */
public record DockerOptions(String network, int containerPort, RestartPolicy restartPolicy, int maxRestarts,
        Duration pollInterval, Duration checkTimeout, int failureThreshold, Duration readinessTimeout,
        Duration stopTimeout, String owner) {

    public DockerOptions {
        if (failureThreshold < 1) {
            throw new IllegalArgumentException("failure threshold must be >= 1");
        }
    }

    boolean hostNetwork() {
        return "host".equals(network);
    }

    com.github.dockerjava.api.model.RestartPolicy dockerPolicy() {
        return switch (restartPolicy) {
            case ALWAYS -> com.github.dockerjava.api.model.RestartPolicy.alwaysRestart();
            case ON_FAILURE -> com.github.dockerjava.api.model.RestartPolicy.onFailureRestart(maxRestarts);
            case NEVER -> com.github.dockerjava.api.model.RestartPolicy.noRestart();
        };
    }
}

package io.servegate.gateway.containers;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What to run for one model version.
 *
 * @param modelName    the registered model it serves
 * @param modelVersion the registered version it serves
 * @param image        container image ({@code docker}, {@code kubernetes}); null for the process manager
 * @param command      command line (the process manager's program and arguments, or the image's
 *                     arguments); may be empty. The manager appends nothing but the documented
 *                     environment: {@code MODEL_NAME}, {@code MODEL_VERSION}, {@code PORT}, {@code HOST}.
 * @param addresses    {@code host:port} of containers someone else runs (the {@code external} manager)
 * @param replicas     how many replicas to run, {@code >= 0}
 * @param resources    per-replica limits
 * @param env          extra environment variables
 */
public record DeploymentSpec(String modelName, String modelVersion, String image, List<String> command,
        List<String> addresses, int replicas, Resources resources, Map<String, String> env) {

    public DeploymentSpec {
        Objects.requireNonNull(modelName, "modelName");
        Objects.requireNonNull(modelVersion, "modelVersion");
        command = command == null ? List.of() : List.copyOf(command);
        addresses = addresses == null ? List.of() : List.copyOf(addresses);
        resources = resources == null ? Resources.NONE : resources;
        env = env == null ? Map.of() : Map.copyOf(env);
        if (replicas < 0) {
            throw new IllegalArgumentException("replicas must be >= 0, got " + replicas);
        }
    }

    /**
     * Per-replica limits; 0 means no limit.
     *
     * @param cpus        CPU cores (fractional allowed)
     * @param memoryBytes memory limit in bytes
     * @param gpus        GPUs to request (docker device request, Kubernetes {@code nvidia.com/gpu})
     */
    public record Resources(double cpus, long memoryBytes, int gpus) {
        public static final Resources NONE = new Resources(0, 0, 0);

        public Resources {
            if (cpus < 0 || memoryBytes < 0 || gpus < 0) {
                throw new IllegalArgumentException("resources must not be negative");
            }
        }
    }
}

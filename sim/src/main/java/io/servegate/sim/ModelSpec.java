package io.servegate.sim;

import io.servegate.core.scheduling.SchedulerConfig;
import java.util.List;

/**
 * One model in a run: its scheduler's configuration (policy, SLO, batch sizes), its replicas at
 * the start and, optionally, an autoscaler. Each model gets its own
 * {@link io.servegate.core.scheduling.ModelScheduler}, as in the gateway.
 *
 * @param autoscaling null for a fixed set of replicas
 */
public record ModelSpec(String name, SchedulerConfig config, List<ReplicaSpec> replicas, Autoscaling autoscaling) {

    public ModelSpec {
        replicas = List.copyOf(replicas);
        if (autoscaling != null && replicas.isEmpty()) {
            throw new IllegalArgumentException("an autoscaled model needs a first replica to copy");
        }
    }

    /** A model with a fixed set of replicas. */
    public ModelSpec(String name, SchedulerConfig config, List<ReplicaSpec> replicas) {
        this(name, config, replicas, null);
    }
}

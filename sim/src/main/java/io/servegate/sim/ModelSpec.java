package io.servegate.sim;

import io.servegate.core.scheduling.SchedulerConfig;
import java.util.List;

/**
 * One model in a run: its scheduler's configuration (policy, SLO, batch sizes) and its replicas.
 * Each model gets its own {@link io.servegate.core.scheduling.ModelScheduler}, as in the gateway.
 */
public record ModelSpec(String name, SchedulerConfig config, List<ReplicaSpec> replicas) {

    public ModelSpec {
        replicas = List.copyOf(replicas);
    }
}

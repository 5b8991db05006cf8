package io.servegate.sim;

import io.servegate.core.scheduling.MultiModelScheduler;
import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.scheduling.SchedulerConfig;
import io.servegate.sim.latency.LatencyModel;
import io.servegate.sim.latency.LinearLatency;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The models and multi-model replicas of a {@link ManyModelScenario}, and how a
 * {@link MultiModelScheduler} over some of them is set up: shared by the run with one scheduler
 * over every model and by a fleet, where each gateway's scheduler serves the models it owns.
 */
final class SharedModels {

    private static final long MS = 1_000_000L;
    /** Batch sizes measured for each model at registration, as the single-model runs' profiling pass. */
    private static final int PROFILE_MAX = 64;

    private final ManyModelScenario scenario;
    private final long[] sizes;
    private final long budget;
    private final LatencyModel latency;
    private final long overhead;

    /** Draws the models' sizes from {@code sizes}, the scenario's second random stream. */
    SharedModels(ManyModelScenario scenario, SplittableRandom sizes) {
        this.scenario = scenario;
        this.sizes = scenario.sizes(sizes);
        long b = 0;
        for (int i = 0; i < scenario.residentModels(); i++) {
            b += this.sizes[i];
        }
        this.budget = b;
        this.latency = new LinearLatency(Math.round(scenario.betaMs() * MS), Math.round(scenario.alphaMs() * MS), 0);
        this.overhead = Math.round(scenario.overheadMs() * MS);
    }

    /** Whether model {@code i} is registered at all: every model on demand, the resident ones in a static placement. */
    boolean registered(int i) {
        return scenario.placement() == ModelPlacement.LRU || i < scenario.residentModels();
    }

    /** A replica of the scenario, named {@code id}. */
    ReplicaSpec replica(String id) {
        return ReplicaSpec.of(id, 1, latency, overhead);
    }

    /** One scheduler over replicas of this scenario, serving no model yet ({@link Pool#register}). */
    Pool pool(String name, Simulation sim, QueryRouter router) {
        return new Pool(name, sim, router);
    }

    /** A {@link MultiModelScheduler} during a run and the models it serves. */
    final class Pool {

        final SchedulerRun<MultiModelScheduler<Object>> run;
        /** What a replica holds when it joins, in a static placement. */
        private final List<String> preloaded = new ArrayList<>();

        private Pool(String name, Simulation sim, QueryRouter router) {
            long slo = Math.round(scenario.sloMs() * MS);
            run = new SchedulerRun<>(name,
                    // samples from registration are all a rarely used model ever has: keep them for the whole run
                    actions -> new MultiModelScheduler<>(SchedulerConfig.of(PolicyKind.CLOCKWORK, slo)
                            .withProfile(16, Long.MAX_VALUE / 4), actions),
                    (s, r, at) -> {
                        s.addReplica(r.spec.id(), budget, at);
                        for (String m : preloaded) {
                            s.preloaded(r.spec.id(), m, at);
                        }
                    }, sim, router);
        }

        /** The scheduler serves model {@code i}, profiled at registration; a replica that joins later holds it in a static placement. */
        void register(int i, long now) {
            String model = ManyModelScenario.id(i);
            long load = scenario.loadNanos(sizes[i]);
            run.scheduler.addModel(model, sizes[i], load);
            run.serves(model, load);
            for (int b = 1; b <= PROFILE_MAX; b *= 2) {
                long service = Math.round(latency.meanNanos(b));
                run.scheduler.profileSample(model, b, service, service + overhead, now);
            }
            if (scenario.placement() == ModelPlacement.STATIC) {
                preloaded.add(model);
            }
        }
    }
}

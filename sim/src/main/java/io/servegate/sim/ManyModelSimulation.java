package io.servegate.sim;

import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.Load;
import io.servegate.core.scheduling.MultiModelScheduler;
import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.scheduling.Query;
import io.servegate.core.scheduling.RejectReason;
import io.servegate.core.scheduling.SchedulerActions;
import io.servegate.core.scheduling.SchedulerConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A many-model run in virtual time: the core's {@link MultiModelScheduler}, unchanged from what a
 * gateway would drive, over emulated multi-model replicas, with the placement the scenario names.
 * Deterministic: randomness comes from streams split off the seed in a fixed order (arrivals, the
 * models' sizes, then each replica's latency noise), so both placements see the same arrivals and
 * the same models.
 */
final class ManyModelSimulation implements SchedulerActions<Void> {

    private static final long MS = 1_000_000L;
    /** Batch sizes measured for each model at registration, as the single-model runs' profiling pass. */
    private static final int PROFILE_MAX = 64;

    private final ManyModelScenario scenario;
    private final EventQueue events = new EventQueue();
    private final MultiModelScheduler<Void> scheduler;
    private final List<SimMultiModelReplica> replicas = new ArrayList<>();
    private final ModelStats stats = new ModelStats();
    private long[] loadNanos;
    private long now;

    private ManyModelSimulation(ManyModelScenario scenario) {
        this.scenario = scenario;
        long slo = Math.round(scenario.sloMs() * MS);
        // samples from registration are all a rarely used model ever has: keep them for the whole run
        this.scheduler = new MultiModelScheduler<>(SchedulerConfig.of(PolicyKind.CLOCKWORK, slo)
                .withProfile(16, Long.MAX_VALUE / 4), this);
    }

    /** Runs {@code scenario} to the end: arrivals stop, then every query leaves. */
    static ManyModelResult run(ManyModelScenario scenario) {
        return new ManyModelSimulation(scenario).execute();
    }

    EventQueue events() {
        return events;
    }

    private ManyModelResult execute() {
        long wallStart = System.nanoTime();
        SplittableRandom root = new SplittableRandom(scenario.seed());
        SplittableRandom arrivalRandom = root.split();
        long[] sizes = scenario.sizes(root.split());
        loadNanos = new long[sizes.length];
        long budget = 0;
        for (int i = 0; i < sizes.length; i++) {
            loadNanos[i] = scenario.loadNanos(sizes[i]);
            if (i < scenario.residentModels()) {
                budget += sizes[i];
            }
        }
        LatencyModel latency = new LinearLatency(Math.round(scenario.betaMs() * MS),
                Math.round(scenario.alphaMs() * MS), 0);
        long overhead = Math.round(scenario.overheadMs() * MS);
        int registered = scenario.placement() == ModelPlacement.STATIC ? scenario.residentModels() : sizes.length;
        for (int i = 0; i < registered; i++) {
            scheduler.addModel(id(i), sizes[i], loadNanos[i]);
            for (int b = 1; b <= PROFILE_MAX; b *= 2) {
                long service = Math.round(latency.meanNanos(b));
                scheduler.profileSample(id(i), b, service, service + overhead, 0);
            }
        }
        for (int r = 0; r < scenario.replicas(); r++) {
            SimMultiModelReplica replica = new SimMultiModelReplica("r" + r, latency, overhead, root.split(), this);
            replicas.add(replica);
            scheduler.addReplica(replica.id, budget, 0);
            if (scenario.placement() == ModelPlacement.STATIC) {
                for (int i = 0; i < registered; i++) {
                    scheduler.preloaded(replica.id, id(i), 0);
                }
            }
            scheduler.setAvailable(replica.id, true, 0);
        }
        double[] weights = ModelChooser.zipf(scenario.models(), scenario.zipf());
        long slo = Math.round(scenario.sloMs() * MS);
        long[] slos = new long[scenario.models()];
        java.util.Arrays.fill(slos, slo);
        Workload workload = Workload.generated(() -> ArrivalProcess.poisson(scenario.rate()),
                () -> ModelChooser.weighted(weights), slos, Math.round(scenario.durationS() * 1e9));
        Workload.Stream stream = workload.open(arrivalRandom);
        Workload.Arrival first = new Workload.Arrival();
        if (stream.next(first)) {
            events.add(new Arrive(stream, first), first.at);
        }
        Event e;
        while ((e = events.poll()) != null) {
            now = e.at;
            e.fire(now);
        }
        long busy = 0;
        for (SimMultiModelReplica r : replicas) {
            busy += r.busyNanos;
        }
        return new ManyModelResult(scenario, stats, scheduler.coldStarts(), scheduler.loads(),
                scheduler.evictions(), scheduler.loadNanos(), busy, System.nanoTime() - wallStart);
    }

    private static String id(int model) {
        return "m" + model;
    }

    private void submit(int model, long deadline, long at) {
        stats.arrived++;
        if (scenario.placement() == ModelPlacement.STATIC && model >= scenario.residentModels()) {
            stats.defaults[RejectReason.NO_REPLICA.ordinal()]++; // placed nowhere
        } else {
            scheduler.submit(id(model), null, deadline, at);
        }
    }

    void batchCompleted(Batch<Void> batch, long serviceNanos, long at) {
        for (Query<Void> q : batch.queries()) {
            stats.answered(at - q.arrival(), at <= q.deadline());
        }
        scheduler.batchCompleted(batch, serviceNanos, at);
    }

    void loadCompleted(Load load, long nanos, long at) {
        scheduler.loadCompleted(load, nanos, at);
    }

    @Override
    public void send(Batch<Void> batch) {
        stats.batch(batch.size());
        replica(batch.replica()).accept(batch, now);
    }

    @Override
    public void load(Load load) {
        replica(load.replica()).accept(load, loadNanos[Integer.parseInt(load.model().substring(1))], now);
    }

    @Override
    public void unload(String replica, String model) {
        // takes no replica time; the scheduler has freed the model's memory already
    }

    @Override
    public void reject(Query<Void> query, RejectReason reason) {
        stats.defaults[reason.ordinal()]++;
    }

    @Override
    public void wakeAt(long nanos) {
        events.add(new Event() {
            @Override
            void fire(long at) {
                scheduler.timer(at);
            }
        }, Math.max(nanos, now));
    }

    private SimMultiModelReplica replica(String id) {
        return replicas.get(Integer.parseInt(id.substring(1)));
    }

    /** The next arrival: submits it and schedules the one after. */
    private final class Arrive extends Event {
        private final Workload.Stream stream;
        private final Workload.Arrival arrival;

        Arrive(Workload.Stream stream, Workload.Arrival arrival) {
            this.stream = stream;
            this.arrival = arrival;
        }

        @Override
        void fire(long at) {
            submit(arrival.model, arrival.deadline, at);
            if (stream.next(arrival)) {
                events.add(this, arrival.at);
            }
        }
    }
}

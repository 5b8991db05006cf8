package io.servegate.sim;

import io.servegate.core.batching.BatchLatencyProfile;
import io.servegate.core.scheduling.ModelScheduler;
import io.servegate.core.scheduling.MultiModelScheduler;
import io.servegate.sim.workload.Workload;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The discrete-event simulator: a virtual clock and a queue of events (arrivals, scheduler
 * wake-ups, batch and load answers, replicas joining and dying), fired in time order until nothing
 * is left. Each scheduler is the core's, driven exactly as the gateway drives it
 * ({@link SchedulerRun}): a {@link ModelScheduler} per model of a {@link Scenario}, one
 * {@link MultiModelScheduler} over the shared replicas of a {@link ManyModelScenario}.
 * Deterministic: one seed gives one result, whatever the machine; randomness comes from streams
 * split off the seed in a fixed order (arrivals first, then what the scenario draws, then each
 * replica's latency noise, then the router's), so adding noise does not change the arrivals.
 */
public final class Simulation {

    private final EventQueue events = new EventQueue();
    private final List<SimReplica> replicas = new ArrayList<>();
    private long now;
    private long fired;
    /** The scenario's lead-in: before it nothing is tallied ({@link Scenario#measureFromNanos}). */
    private long measureFrom;

    private Simulation() {
    }

    /** Runs {@code scenario} to the end: arrivals stop, then every query leaves. */
    public static SimResult run(Scenario scenario) {
        return run(scenario, QueryRouter.direct());
    }

    /** Runs {@code scenario} with {@code router} deciding where arrivals and answered queries go. */
    public static SimResult run(Scenario scenario, QueryRouter router) {
        return new Simulation().execute(scenario, router);
    }

    /** Runs a many-model {@code scenario} to the end: arrivals stop, then every query leaves. */
    public static ManyModelResult run(ManyModelScenario scenario) {
        return run(scenario, QueryRouter.toModelIds());
    }

    /** Runs a many-model {@code scenario} with {@code router} deciding which model each arrival is for. */
    static ManyModelResult run(ManyModelScenario scenario, QueryRouter router) {
        return new Simulation().execute(scenario, router);
    }

    /**
     * Runs a fleet {@code scenario}: the models partitioned among gateways, each query forwarded to
     * the gateway that owns its model; arrivals stop, then every query leaves.
     */
    public static FleetResult run(FleetScenario scenario) {
        return new FleetRun(scenario, new Simulation()).execute();
    }

    long now() {
        return now;
    }

    /** Whether what arrived or was sent at {@code t} is tallied: it is past the lead-in. */
    boolean measured(long t) {
        return t >= measureFrom;
    }

    EventQueue events() {
        return events;
    }

    private SimResult execute(Scenario scenario, QueryRouter router) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long cpuStart = threads.getCurrentThreadCpuTime();
        long wallStart = System.nanoTime();
        measureFrom = scenario.measureFromNanos();
        SplittableRandom root = new SplittableRandom(scenario.seed());
        // the first split, as ArrivalSchedule draws a live run's: the same seed offers the same arrivals
        SplittableRandom arrivalRandom = root.split();
        List<SchedulerRun<?>> runs = new ArrayList<>();
        for (ModelSpec spec : scenario.models()) {
            SchedulerRun<ModelScheduler<Object>> run = new SchedulerRun<>(spec.name(),
                    actions -> new ModelScheduler<>(spec.name(), spec.config(), actions),
                    (s, r, at) -> profiled(s, r, scenario.profileMax(), at), this, router)
                    .serves(spec.name(), 0);
            runs.add(run);
            List<SimReplica> initial = new ArrayList<>();
            for (ReplicaSpec rs : spec.replicas()) {
                initial.add(start(rs, run, root.split()));
            }
            if (spec.autoscaling() != null) {
                // its own stream, split after every replica's: adding autoscaling changes no other draw
                events.add(new AutoscaleDriver(spec, run, this, initial, root.split(), scenario.durationNanos()), 0);
            }
        }
        router.attach(runs, root.split());
        loop(scenario.workload(), arrivalRandom, router);
        long wall = System.nanoTime() - wallStart;
        long cpu = threads.getCurrentThreadCpuTime() - cpuStart; // what the run cost, whatever else shares the cores
        List<SimResult.ModelResult> perModel = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            perModel.add(new SimResult.ModelResult(scenario.models().get(i), runs.get(i).stats));
        }
        List<SimResult.ReplicaResult> perReplica = new ArrayList<>();
        for (SimReplica r : replicas) {
            long until = Math.min(r.diedAt, Math.max(now, scenario.durationNanos()));
            long life = Math.max(0, until - r.spec.joinAtNanos());
            perReplica.add(new SimResult.ReplicaResult(r.spec.id(), r.run.name, r.spec.concurrency(),
                    r.busyNanos, life, r.diedAt != Long.MAX_VALUE && !r.retiring));
        }
        return new SimResult(scenario, perModel, perReplica, now, fired, wall, cpu);
    }

    /**
     * A single-model replica joins as the gateway adds one: registered, warmed up with a batch of
     * one, then profiled at sizes 1, 2, 4, … up to {@code profileMax}; a size that costs over
     * twice the profiles' outlier factor times the one before is run again, and measured the
     * second time.
     */
    private static void profiled(ModelScheduler<Object> s, SimReplica r, int profileMax, long now) {
        String id = r.spec.id();
        s.addReplica(id, r.spec.concurrency(), now);
        r.sample(1); // the warm-up call: it pays the container's one-off costs, and is no sample
        long previous = 0;
        for (int b = 1; b <= profileMax; b *= 2) {
            long service = r.sample(b);
            if (previous > 0 && service > 2 * BatchLatencyProfile.OUTLIER_FACTOR * previous) {
                service = r.sample(b); // a new shape's first run paid one-off costs
            }
            previous = service;
            s.profileSample(id, s.model(), b, service, service + r.spec.overheadNanos(), now);
        }
    }

    private ManyModelResult execute(ManyModelScenario scenario, QueryRouter router) {
        long wallStart = System.nanoTime();
        SplittableRandom root = new SplittableRandom(scenario.seed());
        // the first split, as ArrivalSchedule draws a live run's: the same seed offers the same arrivals
        SplittableRandom arrivalRandom = root.split();
        SharedModels models = new SharedModels(scenario, root.split());
        SharedModels.Pool pool = models.pool("shared", this, router);
        for (int i = 0; i < scenario.models(); i++) {
            if (models.registered(i)) {
                pool.register(i, 0);
            }
        }
        for (int r = 0; r < scenario.replicas(); r++) {
            start(models.replica("r" + r), pool.run, root.split());
        }
        router.attach(List.of(pool.run), root.split());
        loop(scenario.workload(), arrivalRandom, router);
        long busy = 0;
        for (SimReplica r : replicas) {
            busy += r.busyNanos;
        }
        MultiModelScheduler<Object> s = pool.run.scheduler;
        return new ManyModelResult(scenario, pool.run.stats, s.coldStarts(), s.loads(), s.evictions(), s.loadNanos(),
                busy, System.nanoTime() - wallStart);
    }

    /** Fires the arrivals of {@code workload} and everything they cause, in time order, until nothing is left. */
    void loop(Workload workload, SplittableRandom arrivalRandom, QueryRouter router) {
        Workload.Stream stream = workload.open(arrivalRandom);
        Workload.Arrival first = new Workload.Arrival();
        if (stream.next(first)) {
            events.add(new Arrive(stream, first, router), first.at);
        }
        Event e;
        while ((e = events.poll()) != null) {
            now = e.at;
            fired++;
            e.fire(now);
        }
    }

    /** A replica that joins its scheduler at its spec's join time (and dies at its failure time, if any). */
    SimReplica start(ReplicaSpec rs, SchedulerRun<?> run, SplittableRandom random) {
        SimReplica r = new SimReplica(rs, run, random);
        replicas.add(r);
        events.add(new Join(r), Math.max(now, rs.joinAtNanos()));
        if (rs.failAtNanos() != Long.MAX_VALUE) {
            events.add(new Failure(r), rs.failAtNanos());
        }
        return r;
    }

    /** The next arrival: hands it to the router and schedules the one after. */
    private final class Arrive extends Event {
        private final Workload.Stream stream;
        private final Workload.Arrival arrival;
        private final QueryRouter router;

        Arrive(Workload.Stream stream, Workload.Arrival arrival, QueryRouter router) {
            this.stream = stream;
            this.arrival = arrival;
            this.router = router;
        }

        @Override
        void fire(long now) {
            router.arrived(arrival, now);
            if (stream.next(arrival)) {
                events.add(this, arrival.at);
            }
        }
    }

    private static final class Join extends Event {
        private final SimReplica replica;

        Join(SimReplica replica) {
            this.replica = replica;
        }

        @Override
        void fire(long now) {
            replica.run.join(replica, now);
        }
    }

    private static final class Failure extends Event {
        private final SimReplica replica;

        Failure(SimReplica replica) {
            this.replica = replica;
        }

        @Override
        void fire(long now) {
            replica.run.fail(replica, now);
        }
    }
}

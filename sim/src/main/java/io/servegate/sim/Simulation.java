package io.servegate.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The discrete-event simulator: a virtual clock and a queue of events (arrivals, scheduler
 * wake-ups, batch answers, replicas joining and dying), fired in time order until nothing is
 * left. Each model's scheduler is the core's {@link io.servegate.core.scheduling.ModelScheduler},
 * driven exactly as the gateway drives it. Deterministic: one seed gives one result, whatever the
 * machine; randomness comes from streams split off the seed in a fixed order (arrivals first,
 * then each replica's latency noise, then the router's), so adding noise does not change the arrivals.
 */
public final class Simulation {

    private final Scenario scenario;
    private final QueryRouter router;
    private final EventQueue events = new EventQueue();
    private final List<ModelRun> models = new ArrayList<>();
    private final List<SimReplica> replicas = new ArrayList<>();
    private long now;
    private long fired;

    private Simulation(Scenario scenario, QueryRouter router) {
        this.scenario = scenario;
        this.router = router;
    }

    /** Runs {@code scenario} to the end: arrivals stop, then every query leaves. */
    public static SimResult run(Scenario scenario) {
        return run(scenario, QueryRouter.direct());
    }

    /** Runs {@code scenario} with {@code router} deciding where arrivals and answered queries go. */
    static SimResult run(Scenario scenario, QueryRouter router) {
        return new Simulation(scenario, router).execute();
    }

    long now() {
        return now;
    }

    EventQueue events() {
        return events;
    }

    private SimResult execute() {
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long cpuStart = threads.getCurrentThreadCpuTime();
        long wallStart = System.nanoTime();
        SplittableRandom root = new SplittableRandom(scenario.seed());
        SplittableRandom arrivalRandom = root.split();
        for (ModelSpec spec : scenario.models()) {
            ModelRun model = new ModelRun(spec, this, router);
            models.add(model);
            List<SimReplica> initial = new ArrayList<>();
            for (ReplicaSpec rs : spec.replicas()) {
                initial.add(start(rs, model, root.split()));
            }
            if (spec.autoscaling() != null) {
                // its own stream, split after every replica's: adding autoscaling changes no other draw
                events.add(new AutoscaleDriver(model, this, initial, root.split(), scenario.durationNanos()), 0);
            }
        }
        router.attach(models, root.split());
        Workload.Stream stream = scenario.workload().open(arrivalRandom);
        Workload.Arrival first = new Workload.Arrival();
        if (stream.next(first)) {
            events.add(new Arrive(stream, first), first.at);
        }
        Event e;
        while ((e = events.poll()) != null) {
            now = e.at;
            fired++;
            e.fire(now);
        }
        long wall = System.nanoTime() - wallStart;
        long cpu = threads.getCurrentThreadCpuTime() - cpuStart; // what the run cost, whatever else shares the cores
        List<SimResult.ModelResult> perModel = new ArrayList<>();
        for (ModelRun m : models) {
            perModel.add(new SimResult.ModelResult(m.spec, m.stats));
        }
        List<SimResult.ReplicaResult> perReplica = new ArrayList<>();
        for (SimReplica r : replicas) {
            long until = Math.min(r.diedAt, Math.max(now, scenario.durationNanos()));
            long life = Math.max(0, until - r.spec.joinAtNanos());
            perReplica.add(new SimResult.ReplicaResult(r.spec.id(), r.model.spec.name(), r.spec.concurrency(),
                    r.busyNanos, life, r.diedAt != Long.MAX_VALUE && !r.retiring));
        }
        return new SimResult(scenario, perModel, perReplica, now, fired, wall, cpu);
    }

    /** A replica that joins its model at its spec's join time (and dies at its failure time, if any). */
    SimReplica start(ReplicaSpec rs, ModelRun model, SplittableRandom random) {
        SimReplica r = new SimReplica(rs, model, random);
        replicas.add(r);
        events.add(new Join(r), Math.max(now, rs.joinAtNanos()));
        if (rs.failAtNanos() != Long.MAX_VALUE) {
            events.add(new Failure(r), rs.failAtNanos());
        }
        return r;
    }

    /** The next arrival: submits it to its model's scheduler and schedules the one after. */
    private final class Arrive extends Event {
        private final Workload.Stream stream;
        private final Workload.Arrival arrival;

        Arrive(Workload.Stream stream, Workload.Arrival arrival) {
            this.stream = stream;
            this.arrival = arrival;
        }

        @Override
        void fire(long now) {
            router.arrived(arrival, now);
            if (stream.next(arrival)) {
                events.add(this, arrival.at);
            }
        }
    }

    private final class Join extends Event {
        private final SimReplica replica;

        Join(SimReplica replica) {
            this.replica = replica;
        }

        @Override
        void fire(long now) {
            replica.model.join(replica, scenario.profileMax(), now);
        }
    }

    private final class Failure extends Event {
        private final SimReplica replica;

        Failure(SimReplica replica) {
            this.replica = replica;
        }

        @Override
        void fire(long now) {
            replica.model.fail(replica, now);
        }
    }
}

package io.servegate.sim;

import io.servegate.core.fleet.Assignment;
import io.servegate.core.fleet.OwnershipChange;
import io.servegate.core.fleet.OwnershipPlanner;
import io.servegate.core.scheduling.MultiModelScheduler;
import io.servegate.sim.workload.ModelChooser;
import io.servegate.sim.workload.Workload;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * One fleet run ({@link FleetScenario}): plans which gateway owns each model version, deals the
 * replicas by owned load, and routes every arrival, through a forward when it arrived at another
 * gateway than the owner. A forward reaches the owner {@code hop} later, and the owner's scheduler
 * is given the deadline less the hop back, so that what it answers in time reaches the gateway the
 * query arrived at in time. A stopped gateway loses what it had queued and running; its versions
 * are unowned (their queries lost) until its lease runs out, then granted to live gateways by the
 * same planner, which also take over its replicas. A gateway that joins a loaded fleet is handed
 * versions as the gateways' planner balances load (at its first heartbeat, then at most once per
 * ten); each hand-off completes {@link #HANDOFF_NANOS} later, the old owner scheduling the version
 * until then, and replicas move to the joiner with the load (drained where they were: their batches
 * in flight finish there). A query forwarded to a gateway that no longer owns its version is relayed
 * once to the owner, as a gateway relays it.
 */
final class FleetRun implements QueryRouter {

    private static final long SECOND = 1_000_000_000L;
    /** The gateway's defaults ({@code servegate.fleet.tolerance}, {@code servegate.fleet.min-rate}). */
    private static final double TOLERANCE = 0.25;
    private static final double MIN_RATE = 1.0;
    /** The gateway's heartbeat ({@code servegate.fleet.heartbeat}); load moves at most once per ten. */
    private static final long HEARTBEAT_NANOS = 500_000_000L;
    /** A hand-off's plan to its completion: the new owner says it is ready, then the old owner releases it. */
    static final long HANDOFF_NANOS = 2 * HEARTBEAT_NANOS;

    private final FleetScenario scenario;
    private final Simulation sim;
    private final OwnershipPlanner planner = new OwnershipPlanner(TOLERANCE, MIN_RATE);
    private final long hop;
    /** Each version's expected arrivals per second: the rates the planner balances. */
    private final Map<String, Double> rates = new HashMap<>();
    private final Set<String> versions = new LinkedHashSet<>();
    /** Each model's owning gateway; -1 while none. */
    private final int[] owner;
    /** Each model's gateway it is being handed to; -1 while none. */
    private final int[] pending;
    private final boolean[] live;
    /** Arrivals per second each gateway owns, as the planner weighs them. */
    private final double[] load;
    private final List<List<SimReplica>> replicas = new ArrayList<>();
    private final List<SharedModels.Pool> pools = new ArrayList<>();
    private SharedModels models;
    private SplittableRandom random;
    private int turn = -1;

    private final ModelStats atGateways = new ModelStats();
    private long defaulted;
    private long lost;
    private long forwarded;
    private long moves;
    private long[] arrivedPerSecond = new long[16];
    private long[] goodPerSecond = new long[16];

    /** What a query carries: when it arrived at its gateway, its deadline there, and the hops it was forwarded. */
    private record Stamp(long arrival, long deadline, int hops) {
    }

    FleetRun(FleetScenario scenario, Simulation sim) {
        this.scenario = scenario;
        this.sim = sim;
        this.hop = Math.round(scenario.hopMs() * 1e6);
        ManyModelScenario m = scenario.models();
        double[] weights = ModelChooser.zipf(m.models(), m.zipf());
        double total = Arrays.stream(weights).sum();
        for (int i = 0; i < m.models(); i++) {
            versions.add(ManyModelScenario.id(i));
            rates.put(ManyModelScenario.id(i), m.rate() * weights[i] / total);
        }
        owner = new int[m.models()];
        Arrays.fill(owner, -1);
        pending = new int[m.models()];
        Arrays.fill(pending, -1);
        live = new boolean[scenario.gateways()];
        Arrays.fill(live, true);
        if (scenario.joining() >= 0) {
            live[scenario.joining()] = false;
        }
        load = new double[scenario.gateways()];
    }

    FleetResult execute() {
        long wallStart = System.nanoTime();
        ManyModelScenario m = scenario.models();
        SplittableRandom root = new SplittableRandom(m.seed());
        // the same splits in the same order as one scheduler's run: the same seed offers the same arrivals
        SplittableRandom arrivalRandom = root.split();
        models = new SharedModels(m, root.split());
        for (int g = 0; g < scenario.gateways(); g++) {
            pools.add(models.pool(FleetScenario.gateway(g), sim, this));
            replicas.add(new ArrayList<>());
        }
        grant(0);
        int[] dealt = deal(m.replicas(), new int[scenario.gateways()]);
        int next = 0;
        for (int g = 0; g < dealt.length; g++) {
            for (int k = 0; k < dealt[g]; k++) {
                replicas.get(g).add(sim.start(models.replica("r" + next++), pools.get(g).run, root.split()));
            }
        }
        attach(pools.stream().<SchedulerRun<?>>map(p -> p.run).toList(), root.split());
        if (scenario.failGateway() >= 0) {
            long at = Math.round(scenario.failAtS() * SECOND);
            sim.events().add(new Stop(scenario.failGateway()), at);
            sim.events().add(new TakeOver(scenario.failGateway()), at + Math.round(scenario.leaseS() * SECOND));
        }
        if (scenario.joining() >= 0) {
            long at = Math.round(scenario.joinAtS() * SECOND);
            sim.events().add(new Join(), at);
            long end = Math.round(m.durationS() * SECOND);
            for (long t = at + HEARTBEAT_NANOS; t < end; t += 10 * HEARTBEAT_NANOS) {
                sim.events().add(new Balance(), t);
            }
        }
        sim.loop(m.workload(), arrivalRandom, this);
        return result(System.nanoTime() - wallStart);
    }

    /**
     * Grants every unowned version to a live gateway, as the fleet's planner does, and registers it
     * there; returns how many it granted.
     */
    private int grant(long now) {
        int granted = 0;
        // load-balancing hand-offs between live gateways wait for the planner's turn (Balance): a failover
        // waits for the versions' grants
        for (OwnershipChange c : plan()) {
            if (c.kind() != OwnershipChange.Kind.GRANT) {
                continue;
            }
            int i = Integer.parseInt(c.version().substring(1));
            int g = Integer.parseInt(c.target().substring(1));
            owner[i] = g;
            load[g] += Math.max(MIN_RATE, rates.get(c.version()));
            granted++;
            if (models.registered(i)) {
                pools.get(g).register(i, now);
            }
        }
        return granted;
    }

    /** What the fleet's planner would change now. */
    private List<OwnershipChange> plan() {
        Map<String, Assignment> current = new HashMap<>();
        for (int i = 0; i < owner.length; i++) {
            if (owner[i] >= 0) {
                current.put(ManyModelScenario.id(i), new Assignment(FleetScenario.gateway(owner[i]), 1,
                        pending[i] < 0 ? "" : FleetScenario.gateway(pending[i])));
            }
        }
        SortedSet<String> members = new TreeSet<>();
        for (int g = 0; g < live.length; g++) {
            if (live[g]) {
                members.add(FleetScenario.gateway(g));
            }
        }
        return planner.plan(current, versions, members, rates);
    }

    /**
     * Moves replicas to the live gateways that own more load per replica than the others, as
     * {@link #deal} would deal them all now: the replica drains where it was and starts afresh there.
     */
    private void moveReplicas(long now) {
        List<List<SimReplica>> serving = new ArrayList<>();
        for (List<SimReplica> rs : replicas) {
            serving.add(new ArrayList<>(rs.stream().filter(r -> r.alive && !r.retiring).toList()));
        }
        int[] target = deal(serving.stream().mapToInt(List::size).sum(), new int[live.length]);
        for (int to = 0; to < live.length; to++) {
            for (int from = 0; from < live.length && serving.get(to).size() < target[to]; from++) {
                while (serving.get(from).size() > target[from] && serving.get(to).size() < target[to]) {
                    SimReplica r = serving.get(from).remove(serving.get(from).size() - 1);
                    pools.get(from).run.retire(r, now);
                    SimReplica moved = sim.start(models.replica(r.spec.id()), pools.get(to).run, random.split());
                    replicas.get(to).add(moved);
                    serving.get(to).add(moved);
                }
            }
        }
    }

    /**
     * How many of {@code count} more replicas each live gateway gets, on top of {@code has}: each
     * in turn to the gateway with the most owned load per replica (one each first where it has none).
     */
    private int[] deal(int count, int[] has) {
        int[] dealt = new int[live.length];
        for (int k = 0; k < count; k++) {
            int best = -1;
            double bestShare = -1;
            for (int g = 0; g < live.length; g++) {
                int n = has[g] + dealt[g];
                double share = n == 0 ? Double.POSITIVE_INFINITY : load[g] / n;
                if (live[g] && share > bestShare) {
                    best = g;
                    bestShare = share;
                }
            }
            dealt[best]++;
        }
        return dealt;
    }

    @Override
    public void attach(List<SchedulerRun<?>> runs, SplittableRandom random) {
        this.random = random;
    }

    @Override
    public void arrived(Workload.Arrival arrival, long now) {
        int at = receiver();
        atGateways.arrived++;
        arrivedPerSecond = count(arrivedPerSecond, now);
        int o = owner[arrival.model];
        if (o < 0) {
            lost++;
            return;
        }
        Stamp q = new Stamp(now, arrival.deadline, o == at ? 0 : 1);
        if (o == at) {
            pools.get(o).run.submit(ManyModelScenario.id(arrival.model), q, q.deadline, now);
        } else {
            forwarded++;
            sim.events().add(new Forward(o, arrival.model, q), now + hop);
        }
    }

    /** The live gateway the next arrival reaches. */
    private int receiver() {
        if (scenario.spread() == FleetScenario.Spread.RANDOM) {
            int g;
            do {
                g = random.nextInt(live.length);
            } while (!live[g]);
            return g;
        }
        do {
            turn = (turn + 1) % live.length;
        } while (!live[turn]);
        return turn;
    }

    @Override
    public void answered(SchedulerRun<?> model, Object payload, long now) {
        Stamp q = (Stamp) payload;
        long back = now + q.hops * hop;
        boolean inTime = back <= q.deadline;
        atGateways.answered(back - q.arrival, inTime);
        if (inTime) {
            goodPerSecond = count(goodPerSecond, q.arrival);
        }
    }

    @Override
    public void dropped(SchedulerRun<?> model, Object payload, long now) {
        defaulted++;
    }

    /** {@code perSecond} with the second of {@code t} counted one more, grown as needed. */
    private static long[] count(long[] perSecond, long t) {
        int s = (int) (t / SECOND);
        long[] a = s < perSecond.length ? perSecond : Arrays.copyOf(perSecond, Math.max(s + 1, perSecond.length * 2));
        a[s]++;
        return a;
    }

    private FleetResult result(long wallNanos) {
        ModelStats owners = new ModelStats();
        long coldStarts = 0;
        long loads = 0;
        List<FleetResult.Gateway> gateways = new ArrayList<>();
        for (int g = 0; g < live.length; g++) {
            SchedulerRun<MultiModelScheduler<Object>> run = pools.get(g).run;
            owners.add(run.stats);
            coldStarts += run.scheduler.coldStarts();
            loads += run.scheduler.loads();
            int owned = 0;
            for (int o : owner) {
                owned += o == g ? 1 : 0;
            }
            int replicaCount = (int) replicas.get(g).stream().filter(r -> r.alive).count();
            gateways.add(new FleetResult.Gateway(run.name, live[g], owned, replicaCount, load[g], run.stats.arrived(),
                    run.stats.good()));
        }
        long busy = 0;
        for (List<SimReplica> rs : replicas) {
            for (SimReplica r : rs) {
                busy += r.busyNanos;
            }
        }
        int seconds = (int) Math.ceil(scenario.models().durationS());
        return new FleetResult(scenario, atGateways, owners, defaulted, lost, forwarded, moves, coldStarts, loads,
                gateways, Arrays.copyOf(arrivedPerSecond, seconds), Arrays.copyOf(goodPerSecond, seconds), busy,
                wallNanos);
    }

    /** A forwarded query reaches its owner, if that is still its owner. */
    private final class Forward extends Event {
        private final int to;
        private final int model;
        private final Stamp query;

        Forward(int to, int model, Stamp query) {
            this.to = to;
            this.model = model;
            this.query = query;
        }

        @Override
        void fire(long now) {
            int o = owner[model];
            if (live[to] && o != to && o >= 0 && query.hops == 1) {
                // handed on since it was sent: relayed once to the owner, its answer back the same way
                forwarded++;
                sim.events().add(new Forward(o, model, new Stamp(query.arrival, query.deadline, 2)), now + hop);
                return;
            }
            if (!live[to] || o != to) {
                lost++;
                return;
            }
            pools.get(to).run.submit(ManyModelScenario.id(model), query, query.deadline - query.hops * hop, now);
        }
    }

    /** The joining gateway starts its lease: arrivals reach it, and it owns nothing until handed versions. */
    private final class Join extends Event {
        @Override
        void fire(long now) {
            live[scenario.joining()] = true;
        }
    }

    /** The planner's turn to balance load: each hand-off it plans completes {@link #HANDOFF_NANOS} later. */
    private final class Balance extends Event {
        @Override
        void fire(long now) {
            for (OwnershipChange c : plan()) {
                int i = Integer.parseInt(c.version().substring(1));
                int g = Integer.parseInt(c.target().substring(1));
                if (c.kind() == OwnershipChange.Kind.HANDOFF && owner[i] >= 0 && owner[i] != g && pending[i] < 0) {
                    pending[i] = g;
                    sim.events().add(new HandOff(i), now + HANDOFF_NANOS);
                }
            }
        }
    }

    /** A version moves to the gateway it was handed to, which registers it, and replicas follow the load. */
    private final class HandOff extends Event {
        private final int model;

        HandOff(int model) {
            this.model = model;
        }

        @Override
        void fire(long now) {
            int from = owner[model];
            int to = pending[model];
            pending[model] = -1;
            double weight = Math.max(MIN_RATE, rates.get(ManyModelScenario.id(model)));
            load[from] -= weight;
            load[to] += weight;
            owner[model] = to;
            moves++;
            if (models.registered(model)) {
                pools.get(to).register(model, now);
            }
            moveReplicas(now);
        }
    }

    /** A gateway stops: what it queued and ran is lost, its versions unowned, its replicas unscheduled. */
    private final class Stop extends Event {
        private final int gateway;

        Stop(int gateway) {
            this.gateway = gateway;
        }

        @Override
        void fire(long now) {
            live[gateway] = false;
            load[gateway] = 0;
            for (int i = 0; i < owner.length; i++) {
                if (owner[i] == gateway) {
                    owner[i] = -1;
                }
            }
            // what was queued and in flight there gets the default: failing every replica under its scheduler
            // fails their batches, and a scheduler left with no replica rejects what it holds
            SchedulerRun<?> run = pools.get(gateway).run;
            for (SimReplica r : replicas.get(gateway)) {
                if (r.alive) {
                    run.fail(r, now);
                }
            }
        }
    }

    /** The stopped gateway's lease ran out: its versions are granted to live gateways, which take over its replicas. */
    private final class TakeOver extends Event {
        private final int gateway;

        TakeOver(int gateway) {
            this.gateway = gateway;
        }

        @Override
        void fire(long now) {
            moves += grant(now);
            int[] has = new int[live.length];
            for (int g = 0; g < live.length; g++) {
                has[g] = (int) replicas.get(g).stream().filter(r -> r.alive).count();
            }
            List<SimReplica> orphaned = replicas.get(gateway);
            int[] dealt = deal(orphaned.size(), has);
            int k = 0;
            for (int g = 0; g < dealt.length; g++) {
                for (int d = 0; d < dealt[g]; d++) {
                    // the same container, now scheduled by another gateway, which knows nothing it holds
                    String id = orphaned.get(k++).spec.id();
                    replicas.get(g).add(sim.start(models.replica(id), pools.get(g).run, random.split()));
                }
            }
        }
    }
}

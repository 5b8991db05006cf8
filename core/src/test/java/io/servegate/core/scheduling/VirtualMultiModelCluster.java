package io.servegate.core.scheduling;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * A discrete-event test bed for one {@link MultiModelScheduler}: emulated multi-model containers
 * that run what they are sent in order, one thing at a time, a load taking exactly the model's
 * load time and a batch of b exactly {@code β + α·b}, behind a transport that takes half the
 * overhead each way (none unless {@link #overhead} says). A container tracks the models it holds
 * and its memory itself, and records a violation when it is asked to run a batch of a model it
 * does not hold, to load past its budget, or to unload a model it does not hold or still has a
 * batch of to run. With {@link #failing} loads and batches fail at random: a failed load leaves the
 * model unloaded, and the container refuses the batches of it that follow. With
 * {@link #slowFirstBatch} the first batch each container runs is slower, as on a cold gateway and
 * container.
 */
final class VirtualMultiModelCluster implements SchedulerActions<Integer> {

    static final long MS = 1_000_000L;

    /** A load or batch as a container ran it, beside what the scheduler predicted. */
    record Run(String replica, String model, boolean load, long start, long end, long predictedStart,
            long predictedFinish) {
    }

    private record Footprint(long size, long load, long beta, long alpha) {
    }

    private record Event(long at, long seq, Runnable action) {
    }

    private static final class Container {
        final long budget;
        final Map<String, Long> held = new HashMap<>();
        final Map<String, Integer> batchesToRun = new HashMap<>();
        final java.util.Set<String> failedLoads = new java.util.HashSet<>();
        long used;
        long freeAt;
        boolean alive = true;
        int batchesRun;

        Container(long budget) {
            this.budget = budget;
        }
    }

    final MultiModelScheduler<Integer> scheduler;
    private final PriorityQueue<Event> events = new PriorityQueue<>(
            (a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
    private final Map<String, Footprint> models = new LinkedHashMap<>();
    private final Map<String, Container> containers = new HashMap<>();
    private final Map<Object, String> inFlight = new java.util.IdentityHashMap<>();
    private final SplittableRandom random;
    private long seq;
    private long oneWay;
    private double failureProbability;
    private long firstBatchTransport;
    private long firstBatchService;
    long now;

    final List<Long> deadlines = new ArrayList<>();
    final List<Integer> outcomes = new ArrayList<>();
    final List<Long> answeredAt = new ArrayList<>();
    final Map<RejectReason, Integer> rejected = new HashMap<>();
    final List<Batch<Integer>> batches = new ArrayList<>();
    final List<Load> loads = new ArrayList<>();
    final List<String> unloads = new ArrayList<>();
    final List<Run> runs = new ArrayList<>();
    final List<String> violations = new ArrayList<>();
    int failed;
    int failedLoads;
    int failedBatches;

    VirtualMultiModelCluster(long seed) {
        this.scheduler = new MultiModelScheduler<>(SchedulerConfig.of(PolicyKind.CLOCKWORK, 100 * MS), this);
        this.random = new SplittableRandom(seed);
    }

    /** A round-trip transport overhead, half each way, for the models added after. */
    VirtualMultiModelCluster overhead(long nanos) {
        oneWay = nanos / 2;
        return this;
    }

    /** Each load and batch fails with this probability. */
    VirtualMultiModelCluster failing(double probability) {
        failureProbability = probability;
        return this;
    }

    /**
     * The first batch each container runs takes {@code serviceNanos} longer to run, and its answer
     * {@code transportNanos} longer to come back.
     */
    VirtualMultiModelCluster slowFirstBatch(long transportNanos, long serviceNanos) {
        firstBatchTransport = transportNanos;
        firstBatchService = serviceNanos;
        return this;
    }

    /** A model of {@code size} bytes loading in {@code load}, whose batch of b takes β + α·b, profiled for sizes 1..16. */
    VirtualMultiModelCluster model(String id, long size, long load, long beta, long alpha) {
        models.put(id, new Footprint(size, load, beta, alpha));
        scheduler.addModel(id, size, load);
        for (int b = 1; b <= 16; b++) {
            scheduler.profileSample(id, b, beta + alpha * b, beta + alpha * b + 2 * oneWay, now);
        }
        return this;
    }

    /** An available replica with a memory budget of {@code budget} bytes, holding nothing. */
    VirtualMultiModelCluster replica(String id, long budget) {
        containers.put(id, new Container(budget));
        scheduler.addReplica(id, budget, now);
        scheduler.setAvailable(id, true, now);
        return this;
    }

    /** The replica holds {@code model} from the start. */
    VirtualMultiModelCluster preloaded(String replica, String model) {
        Container c = containers.get(replica);
        c.held.put(model, models.get(model).size);
        c.used += models.get(model).size;
        scheduler.preloaded(replica, model, now);
        return this;
    }

    /** Submits one query for {@code model} now, due at {@code deadline}; returns its index. */
    int submit(String model, long deadline) {
        int id = deadlines.size();
        deadlines.add(deadline);
        outcomes.add(0);
        answeredAt.add(-1L);
        scheduler.submit(model, id, deadline, now);
        return id;
    }

    /** Poisson arrivals at {@code rate} per second for {@code duration}, each for model i with probability weights[i] / Σ, due {@code slo} later. */
    VirtualMultiModelCluster poisson(double rate, long duration, long slo, double... weights) {
        List<String> ids = List.copyOf(models.keySet());
        double total = java.util.Arrays.stream(weights).sum();
        long end = now + duration;
        long t = now;
        while (true) {
            t += (long) (-Math.log(1 - random.nextDouble()) / rate * 1e9);
            if (t >= end) {
                return this;
            }
            double u = random.nextDouble() * total;
            int m = 0;
            while (m < weights.length - 1 && u >= weights[m]) {
                u -= weights[m++];
            }
            long at = t;
            String model = ids.get(m);
            at(at, () -> submit(model, at + slo));
        }
    }

    /** Removes a replica at {@code t}: the scheduler loses it, and everything sent to it fails. */
    void kill(String id, long t) {
        at(t, () -> {
            containers.get(id).alive = false;
            scheduler.removeReplica(id, now);
            List<Object> lost = new ArrayList<>();
            inFlight.forEach((action, replica) -> {
                if (replica.equals(id)) {
                    lost.add(action);
                }
            });
            for (Object action : lost) {
                inFlight.remove(action);
                if (action instanceof Load l) {
                    scheduler.loadFailed(l, now);
                } else {
                    @SuppressWarnings("unchecked")
                    Batch<Integer> b = (Batch<Integer>) action;
                    gaveUp(scheduler.batchFailed(b, b.queries(), now));
                }
            }
        });
    }

    void at(long t, Runnable action) {
        events.add(new Event(t, seq++, action));
    }

    void runUntil(long t) {
        Event e;
        while ((e = events.peek()) != null && e.at <= t) {
            events.poll();
            now = Math.max(now, e.at);
            e.action.run();
        }
        now = Math.max(now, t);
    }

    /** Runs until nothing is left to happen; the clock stays at the last event. */
    void drain() {
        while (!events.isEmpty()) {
            runUntil(events.peek().at);
        }
    }

    @Override
    public void load(Load load) {
        loads.add(load);
        Container c = containers.get(load.replica());
        Footprint f = models.get(load.model());
        boolean fails = failureProbability > 0 && random.nextDouble() < failureProbability;
        if (fails) {
            c.failedLoads.add(load.model());
        } else {
            c.failedLoads.remove(load.model());
            if (c.held.putIfAbsent(load.model(), f.size) != null) {
                violations.add("loaded " + load + " twice");
            }
            c.used += f.size;
            if (c.used > c.budget) {
                violations.add(load + " past the budget: " + c.used + " > " + c.budget);
            }
        }
        long start = Math.max(now + oneWay, c.freeAt);
        long end = start + f.load;
        c.freeAt = end;
        runs.add(new Run(load.replica(), load.model(), true, start, end, load.predictedStart(), load.predictedFinish()));
        inFlight.put(load, load.replica());
        at(end + oneWay, () -> {
            if (!c.alive || inFlight.remove(load) == null) {
                return;
            }
            if (fails) {
                failedLoads++;
                scheduler.loadFailed(load, now);
            } else {
                scheduler.loadCompleted(load, end - start, now);
            }
        });
    }

    @Override
    public void unload(String replica, String model) {
        Container c = containers.get(replica);
        Long size = c.held.remove(model);
        if (c.batchesToRun.getOrDefault(model, 0) > 0) {
            violations.add("unloaded " + model + " from " + replica + " with a batch of it still to run");
        }
        if (size == null) {
            violations.add("unloaded " + model + " from " + replica + ", which did not hold it");
        } else {
            c.used -= size;
        }
        unloads.add(model);
    }

    @Override
    public void send(Batch<Integer> batch) {
        batches.add(batch);
        Container c = containers.get(batch.replica());
        Footprint f = models.get(batch.model());
        if (!c.held.containsKey(batch.model())) {
            if (c.failedLoads.contains(batch.model())) { // refused at once
                inFlight.put(batch, batch.replica());
                at(now + 2 * oneWay, () -> {
                    if (c.alive && inFlight.remove(batch) != null) {
                        failedBatches++;
                        gaveUp(scheduler.batchFailed(batch, batch.queries(), now));
                    }
                });
                return;
            }
            violations.add("batch of " + batch.model() + " on " + batch.replica() + ", which does not hold it");
        }
        boolean fails = failureProbability > 0 && random.nextDouble() < failureProbability;
        boolean first = c.batchesRun++ == 0;
        long start = Math.max(now + oneWay, c.freeAt);
        long end = start + f.beta + f.alpha * batch.size() + (first ? firstBatchService : 0);
        long back = oneWay + (first ? firstBatchTransport : 0);
        c.freeAt = end;
        runs.add(new Run(batch.replica(), batch.model(), false, start, end, batch.predictedStart(),
                batch.predictedFinish()));
        inFlight.put(batch, batch.replica());
        c.batchesToRun.merge(batch.model(), 1, Integer::sum);
        at(end, () -> c.batchesToRun.merge(batch.model(), -1, Integer::sum));
        at(end + back, () -> {
            if (!c.alive || inFlight.remove(batch) == null) {
                return;
            }
            if (fails) {
                failedBatches++;
                gaveUp(scheduler.batchFailed(batch, batch.queries(), now));
                return;
            }
            for (Query<Integer> q : batch.queries()) {
                leave(q.payload());
                answeredAt.set(q.payload(), now);
            }
            scheduler.batchCompleted(batch, end - start, now);
        });
    }

    @Override
    public void reject(Query<Integer> query, RejectReason reason) {
        leave(query.payload());
        rejected.merge(reason, 1, Integer::sum);
    }

    @Override
    public void wakeAt(long nanos) {
        at(Math.max(nanos, now), () -> scheduler.timer(now));
    }

    private void gaveUp(List<Query<Integer>> queries) {
        for (Query<Integer> q : queries) {
            leave(q.payload());
            failed++;
        }
    }

    private void leave(int id) {
        outcomes.set(id, outcomes.get(id) + 1);
    }

    int good() {
        int n = 0;
        for (int i = 0; i < deadlines.size(); i++) {
            if (answeredAt.get(i) >= 0 && answeredAt.get(i) <= deadlines.get(i)) {
                n++;
            }
        }
        return n;
    }

    int late() {
        int n = 0;
        for (int i = 0; i < deadlines.size(); i++) {
            if (answeredAt.get(i) > deadlines.get(i)) {
                n++;
            }
        }
        return n;
    }
}

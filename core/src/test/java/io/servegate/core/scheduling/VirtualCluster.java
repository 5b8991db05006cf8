package io.servegate.core.scheduling;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * A discrete-event test bed for any {@link Scheduler}: emulated containers that run what they are
 * sent in order, one thing at a time, a load taking exactly the model's load time and a batch of b
 * exactly {@code β + α·b}, behind a transport that takes half the overhead each way; arrivals,
 * timers and completions in virtual time. It records what happened to every query, so tests can
 * check the scheduler's promises.
 *
 * <p>{@link #of} drives a {@link ModelScheduler} of {@link #MODEL}, whose replicas each have their
 * own β, α and overhead ({@link #replica(String, long, long, long)}). {@link #multiModel} drives a
 * {@link MultiModelScheduler}, whose models each have their own footprint and β, α
 * ({@link #model}), on replicas with a memory budget ({@link #replica(String, long)}). A container
 * tracks the models it holds and its memory itself, and records a violation when it is asked to
 * run a batch of a model it does not hold, to load past its budget, or to unload a model it does
 * not hold or still has a batch of to run. With {@link #failing} loads and batches fail at random:
 * a failed load leaves the model unloaded, and the container refuses the batches of it that follow.
 *
 * @param <S> the scheduler under test
 */
final class VirtualCluster<S extends Scheduler<Integer>> implements SchedulerActions<Integer> {

    static final long MS = 1_000_000L;
    /** The model a {@link ModelScheduler} under test serves. */
    static final String MODEL = "m";

    /** A load or batch as a container ran it, beside what the scheduler predicted. */
    record Run(String replica, String model, boolean load, long start, long end, long predictedStart,
            long predictedFinish) {
    }

    /** A model's size and load time, and its batch of b's cost, β + α·b. */
    private record Footprint(long size, long load, long beta, long alpha) {
    }

    private record Event(long at, long seq, Runnable action) {
    }

    /** How replicas and models join the scheduler under test: each scheduler has its own way. */
    private interface Registration<T> {

        void replica(T scheduler, String id, long budgetBytes, long now);

        default void model(T scheduler, String id, Footprint f, long overhead, long now) {
            throw new UnsupportedOperationException("a " + scheduler.getClass().getSimpleName()
                    + " serves one model, " + MODEL);
        }

        default void preloaded(T scheduler, String replica, String model, long now) {
            throw new UnsupportedOperationException("a " + scheduler.getClass().getSimpleName()
                    + "'s replicas hold their one model");
        }
    }

    private static final class Container {
        final long budget;
        final long oneWay;
        /** The container's own cost, whatever the model; null: each model's footprint. */
        final Footprint own;
        final Map<String, Long> held = new HashMap<>();
        final Map<String, Integer> batchesToRun = new HashMap<>();
        final Set<String> failedLoads = new HashSet<>();
        long used;
        long freeAt;
        boolean alive = true;
        int batchesRun;
        double failureProbability;
        long slowFrom = Long.MAX_VALUE;
        long slowUntil;
        int slowFactor = 1;

        Container(long budget, long oneWay, Footprint own, double failureProbability) {
            this.budget = budget;
            this.oneWay = oneWay;
            this.own = own;
            this.failureProbability = failureProbability;
        }

        long service(Footprint f, int size, long start) {
            long t = f.beta + f.alpha * size;
            return start >= slowFrom && start < slowUntil ? t * slowFactor : t;
        }
    }

    final S scheduler;
    private final Registration<S> registration;
    private final long safetyMargin;
    private final PriorityQueue<Event> events = new PriorityQueue<>(
            (a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
    private final Map<String, Footprint> models = new LinkedHashMap<>();
    private final Map<String, Container> containers = new HashMap<>();
    /** Loads and batches sent and not yet returned, in the order sent, with their replica. */
    private final Map<Object, String> inFlight = new LinkedHashMap<>();
    private final SplittableRandom random;
    private long seq;
    private long oneWay;
    private double failureProbability;
    private long firstBatchTransport;
    private long firstBatchService;
    long now;

    // what happened to each query (payload = index)
    final List<Long> deadlines = new ArrayList<>();
    final List<Integer> outcomes = new ArrayList<>(); // times each query left the scheduler
    final List<Long> answeredAt = new ArrayList<>();
    final List<Tenant> tenantOf = new ArrayList<>();
    final List<Long> rejectedAt = new ArrayList<>();
    /** Per query, its share of the service time of the batch that answered it. */
    final List<Long> modelNanos = new ArrayList<>();
    final Map<RejectReason, Integer> rejected = new HashMap<>();
    final List<Batch<Integer>> batches = new ArrayList<>();
    final List<Load> loads = new ArrayList<>();
    final List<String> unloads = new ArrayList<>();
    final List<Run> runs = new ArrayList<>();
    final List<String> violations = new ArrayList<>();
    final List<Long> wakeRequests = new ArrayList<>();
    int failed;
    int failedLoads;
    int failedBatches;
    /** Timers fire up to this late (uniformly), as on a loaded machine. */
    long timerJitter;
    /** Containers take up to this much longer than the profile says (uniformly). */
    long serviceJitter;
    /**
     * Each batch's transport, both ways, is its replica's times a lognormal factor of mean 1 and
     * this log-scale deviation, as round trips spread on a shared machine; 0: exact.
     */
    double transportSigma;
    /** Batches whose predicted answer (finish + half the overhead + margin) came after a member's deadline. */
    int predictedLate;

    private VirtualCluster(long seed, java.util.function.Function<SchedulerActions<Integer>, S> scheduler,
            Registration<S> registration, long safetyMargin) {
        this.scheduler = scheduler.apply(this);
        this.registration = registration;
        this.safetyMargin = safetyMargin;
        this.random = new SplittableRandom(seed);
    }

    /** A cluster of single-model replicas of {@link #MODEL}, scheduled with {@code config}. */
    static VirtualCluster<ModelScheduler<Integer>> of(SchedulerConfig config, long seed) {
        return new VirtualCluster<>(seed, actions -> new ModelScheduler<>(MODEL, config, actions),
                (s, id, budget, now) -> s.addReplica(id, 1, now), config.safetyMarginNanos());
    }

    /** A cluster of multi-model replicas, scheduled with clockwork's defaults and a 100 ms SLO. */
    static VirtualCluster<MultiModelScheduler<Integer>> multiModel(long seed) {
        SchedulerConfig config = SchedulerConfig.of(PolicyKind.CLOCKWORK, 100 * MS);
        return new VirtualCluster<>(seed, actions -> new MultiModelScheduler<>(config, actions),
                new Registration<>() {
                    @Override
                    public void replica(MultiModelScheduler<Integer> s, String id, long budget, long now) {
                        s.addReplica(id, budget, now);
                    }

                    @Override
                    public void model(MultiModelScheduler<Integer> s, String id, Footprint f, long overhead,
                            long now) {
                        s.addModel(id, f.size, f.load);
                        for (int b = 1; b <= 16; b++) {
                            s.profileSample(id, b, f.beta + f.alpha * b, f.beta + f.alpha * b + overhead, now);
                        }
                    }

                    @Override
                    public void preloaded(MultiModelScheduler<Integer> s, String replica, String model, long now) {
                        s.preloaded(replica, model, now);
                    }
                }, config.safetyMarginNanos());
    }

    // ---- the cluster ----

    /** A round-trip transport overhead, half each way, for the models and replicas added after. */
    VirtualCluster<S> overhead(long nanos) {
        oneWay = nanos / 2;
        return this;
    }

    /** Each load and batch of the replicas added after fails with this probability. */
    VirtualCluster<S> failing(double probability) {
        failureProbability = probability;
        return this;
    }

    /** Each load and batch of replica {@code id} fails with this probability. */
    VirtualCluster<S> failing(String id, double probability) {
        containers.get(id).failureProbability = probability;
        return this;
    }

    /**
     * The first batch each container runs takes {@code serviceNanos} longer to run, and its answer
     * {@code transportNanos} longer to come back.
     */
    VirtualCluster<S> slowFirstBatch(long transportNanos, long serviceNanos) {
        firstBatchTransport = transportNanos;
        firstBatchService = serviceNanos;
        return this;
    }

    /** Makes a replica's batches {@code factor} times slower when they start in [from, until). */
    VirtualCluster<S> slow(String id, int factor, long from, long until) {
        Container c = containers.get(id);
        c.slowFactor = factor;
        c.slowFrom = from;
        c.slowUntil = until;
        return this;
    }

    /** An available single-model replica whose batch of b takes exactly beta + alpha·b, with the given round-trip overhead. */
    VirtualCluster<S> replica(String id, long beta, long alpha, long overhead) {
        Container c = new Container(Long.MAX_VALUE, overhead / 2, new Footprint(0, 0, beta, alpha), failureProbability);
        c.held.put(MODEL, 0L);
        return join(id, c);
    }

    /** An available multi-model replica with a memory budget of {@code budget} bytes, holding nothing. */
    VirtualCluster<S> replica(String id, long budget) {
        return join(id, new Container(budget, oneWay, null, failureProbability));
    }

    private VirtualCluster<S> join(String id, Container c) {
        containers.put(id, c);
        registration.replica(scheduler, id, c.budget, now);
        scheduler.setAvailable(id, true, now);
        return this;
    }

    /** Seeds a single-model replica's profile with exact samples for sizes 1..max, as the profiling pass at registration does. */
    VirtualCluster<S> profiled(String id, int max) {
        Container c = containers.get(id);
        for (int b = 1; b <= max; b++) {
            long service = c.own.beta + c.own.alpha * b;
            scheduler.profileSample(id, MODEL, b, service, service + 2 * c.oneWay, now);
        }
        return this;
    }

    /** A model of {@code size} bytes loading in {@code load}, whose batch of b takes β + α·b, profiled for sizes 1..16. */
    VirtualCluster<S> model(String id, long size, long load, long beta, long alpha) {
        Footprint f = new Footprint(size, load, beta, alpha);
        models.put(id, f);
        registration.model(scheduler, id, f, 2 * oneWay, now);
        return this;
    }

    /** The replica holds {@code model} from the start. */
    VirtualCluster<S> preloaded(String replica, String model) {
        Container c = containers.get(replica);
        c.held.put(model, models.get(model).size);
        c.used += models.get(model).size;
        registration.preloaded(scheduler, replica, model, now);
        return this;
    }

    // ---- arrivals ----

    /**
     * Open-loop Poisson arrivals at {@code rate} per second from now for {@code duration}, each due
     * {@code slo} later: for {@link #MODEL}, or, with {@code weights}, for model i of those added
     * with probability weights[i] / Σ.
     */
    VirtualCluster<S> poisson(double rate, long duration, long slo, double... weights) {
        List<String> ids = List.copyOf(models.keySet());
        double total = java.util.Arrays.stream(weights).sum();
        long end = now + duration;
        long t = now;
        while (true) {
            t += (long) (-Math.log(1 - random.nextDouble()) / rate * 1e9);
            if (t >= end) {
                return this;
            }
            String model = MODEL;
            if (weights.length > 0) {
                double u = random.nextDouble() * total;
                int m = 0;
                while (m < weights.length - 1 && u >= weights[m]) {
                    u -= weights[m++];
                }
                model = ids.get(m);
            }
            long at = t;
            String chosen = model;
            at(at, () -> submit(chosen, at + slo));
        }
    }

    /** Gamma-distributed gaps with squared coefficient of variation {@code cv2} (shape 1/cv2), mean 1/rate. */
    VirtualCluster<S> gamma(double rate, double cv2, long duration, long slo) {
        double shape = 1 / cv2;
        double scale = 1 / (rate * shape);
        long end = now + duration;
        long t = now;
        while (true) {
            t += (long) (gammaSample(shape) * scale * 1e9);
            if (t >= end) {
                return this;
            }
            long at = t;
            at(at, () -> submit(at + slo));
        }
    }

    /** Open-loop Poisson arrivals for {@link #MODEL} and {@code tenant}'s app, beside any others already planned. */
    VirtualCluster<S> poisson(Tenant tenant, double rate, long duration, long slo) {
        return poisson(MODEL, tenant, rate, duration, slo);
    }

    /** Open-loop Poisson arrivals for {@code model} and {@code tenant}'s app, beside any others already planned. */
    VirtualCluster<S> poisson(String model, Tenant tenant, double rate, long duration, long slo) {
        long end = now + duration;
        long t = now;
        while (true) {
            t += (long) (-Math.log(1 - random.nextDouble()) / rate * 1e9);
            if (t >= end) {
                return this;
            }
            long at = t;
            at(at, () -> submit(model, at + slo, tenant));
        }
    }

    /** Submits one query for {@link #MODEL} now with the given deadline; returns its index. */
    int submit(long deadline) {
        return submit(MODEL, deadline);
    }

    /** Submits one query for {@code model} now, due at {@code deadline}; returns its index. */
    int submit(String model, long deadline) {
        return submit(model, deadline, Tenant.DEFAULT);
    }

    /** Submits one query for {@code model} and {@code tenant}'s app now, due at {@code deadline}; returns its index. */
    int submit(String model, long deadline, Tenant tenant) {
        int id = deadlines.size();
        deadlines.add(deadline);
        outcomes.add(0);
        answeredAt.add(-1L);
        tenantOf.add(tenant);
        rejectedAt.add(-1L);
        modelNanos.add(0L);
        scheduler.submit(model, id, deadline, tenant, now);
        return id;
    }

    // ---- time ----

    void at(long t, Runnable action) {
        events.add(new Event(t, seq++, action));
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
                    failedBatches++;
                    gaveUp(scheduler.batchFailed(b, b.queries(), now));
                }
            }
        });
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

    // ---- the scheduler's actions ----

    @Override
    public void load(Load load) {
        loads.add(load);
        Container c = containers.get(load.replica());
        Footprint f = models.get(load.model());
        boolean fails = c.failureProbability > 0 && random.nextDouble() < c.failureProbability;
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
        long start = Math.max(now + c.oneWay, c.freeAt);
        long end = start + f.load;
        c.freeAt = end;
        runs.add(new Run(load.replica(), load.model(), true, start, end, load.predictedStart(), load.predictedFinish()));
        inFlight.put(load, load.replica());
        at(end + c.oneWay, () -> {
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
        long oh = 2 * c.oneWay;
        long predictedAnswer = batch.predictedFinish() + (oh - oh / 2) + safetyMargin;
        for (Query<Integer> q : batch.queries()) {
            if (q.deadline() < predictedAnswer && batch.predictedFinish() != batch.sentAt()) {
                predictedLate++;
                break;
            }
        }
        if (!c.held.containsKey(batch.model())) {
            if (c.failedLoads.contains(batch.model())) { // refused at once
                inFlight.put(batch, batch.replica());
                at(now + oh, () -> {
                    if (c.alive && inFlight.remove(batch) != null) {
                        failedBatches++;
                        gaveUp(scheduler.batchFailed(batch, batch.queries(), now));
                    }
                });
                return;
            }
            violations.add("batch of " + batch.model() + " on " + batch.replica() + ", which does not hold it");
        }
        Footprint f = c.own != null ? c.own : models.get(batch.model());
        boolean first = c.batchesRun++ == 0;
        long oneWay = c.oneWay;
        if (transportSigma > 0) {
            oneWay = Math.round(oneWay * Math.exp(transportSigma * random.nextGaussian() - transportSigma * transportSigma / 2));
        }
        long start = Math.max(now + oneWay, c.freeAt);
        long end = start + c.service(f, batch.size(), start) + (first ? firstBatchService : 0)
                + (serviceJitter > 0 ? random.nextLong(serviceJitter) : 0);
        boolean fails = c.failureProbability > 0 && random.nextDouble() < c.failureProbability;
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
                modelNanos.set(q.payload(), (end - start) / batch.size());
            }
            scheduler.batchCompleted(batch, end - start, now);
        });
    }

    @Override
    public void reject(Query<Integer> query, RejectReason reason) {
        leave(query.payload());
        rejectedAt.set(query.payload(), now);
        rejected.merge(reason, 1, Integer::sum);
    }

    @Override
    public void wakeAt(long nanos) {
        wakeRequests.add(nanos);
        long late = timerJitter > 0 ? random.nextLong(timerJitter) : 0;
        at(Math.max(nanos, now) + late, () -> scheduler.timer(now));
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

    // ---- summaries ----

    int submitted() {
        return deadlines.size();
    }

    /** Predictions answered by their deadline. */
    int good() {
        int n = 0;
        for (int i = 0; i < deadlines.size(); i++) {
            if (answeredAt.get(i) >= 0 && answeredAt.get(i) <= deadlines.get(i)) {
                n++;
            }
        }
        return n;
    }

    /** Predictions answered after their deadline. */
    int late() {
        int n = 0;
        for (int i = 0; i < deadlines.size(); i++) {
            if (answeredAt.get(i) > deadlines.get(i)) {
                n++;
            }
        }
        return n;
    }

    /** Queries submitted for {@code app}. */
    int submitted(String app) {
        return count(app, i -> true);
    }

    /** {@code app}'s predictions answered by their deadline. */
    int good(String app) {
        return count(app, i -> answeredAt.get(i) >= 0 && answeredAt.get(i) <= deadlines.get(i));
    }

    /** {@code app}'s predictions answered after their deadline. */
    int late(String app) {
        return count(app, i -> answeredAt.get(i) > deadlines.get(i));
    }

    /** {@code app}'s queries rejected at their deadline or later (not at once). */
    int rejectedAtDeadline(String app) {
        return count(app, i -> rejectedAt.get(i) >= 0 && rejectedAt.get(i) >= deadlines.get(i));
    }

    /** The model time that answered {@code app}'s queries, each batch's shared equally by its queries. */
    long modelNanos(String app) {
        long n = 0;
        for (int i = 0; i < deadlines.size(); i++) {
            if (tenantOf.get(i).app().equals(app)) {
                n += modelNanos.get(i);
            }
        }
        return n;
    }

    private int count(String app, java.util.function.IntPredicate p) {
        int n = 0;
        for (int i = 0; i < deadlines.size(); i++) {
            if (tenantOf.get(i).app().equals(app) && p.test(i)) {
                n++;
            }
        }
        return n;
    }

    double meanBatchSize() {
        return batches.stream().mapToInt(Batch::size).average().orElse(0);
    }

    private double gammaSample(double shape) {
        // Marsaglia and Tsang; shapes below 1 by the boost u^(1/shape)
        if (shape < 1) {
            return gammaSample(shape + 1) * Math.pow(random.nextDouble(), 1 / shape);
        }
        double d = shape - 1.0 / 3;
        double c = 1 / Math.sqrt(9 * d);
        while (true) {
            double x;
            double v;
            do {
                x = normal();
                v = 1 + c * x;
            } while (v <= 0);
            v = v * v * v;
            double u = random.nextDouble();
            if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) {
                return d * v;
            }
        }
    }

    private double normal() {
        double u1 = 1 - random.nextDouble();
        double u2 = random.nextDouble();
        return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    }
}

package io.servegate.core.scheduling;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * A discrete-event test bed for one {@link ModelScheduler}: emulated containers that run the
 * batches they are sent one at a time, in order, each taking exactly {@code β + α·b}, behind a
 * transport that takes half the overhead each way; arrivals, timers and completions in virtual
 * time. It records what happened to every query, so tests can check the scheduler's promises.
 */
final class VirtualCluster implements SchedulerActions<Integer> {

    static final long MS = 1_000_000L;

    private record Event(long at, long seq, Runnable action) {
    }

    private static final class Container {
        final long beta;
        final long alpha;
        final long oneWay;
        long freeAt;
        boolean alive = true;
        double failureProbability;
        long slowFrom = Long.MAX_VALUE;
        long slowUntil;
        int slowFactor = 1;

        long service(int size, long start) {
            long t = beta + alpha * size;
            return start >= slowFrom && start < slowUntil ? t * slowFactor : t;
        }

        Container(long beta, long alpha, long oneWay) {
            this.beta = beta;
            this.alpha = alpha;
            this.oneWay = oneWay;
        }
    }

    final ModelScheduler<Integer> scheduler;
    private final PriorityQueue<Event> events = new PriorityQueue<>(
            (a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
    private final Map<String, Container> containers = new HashMap<>();
    private final Map<String, List<Batch<Integer>>> inFlight = new HashMap<>();
    private final SplittableRandom random;
    private long seq;
    long now;

    // what happened to each query (payload = index)
    final List<Long> deadlines = new ArrayList<>();
    final List<Integer> outcomes = new ArrayList<>(); // times each query left the scheduler
    final List<Long> answeredAt = new ArrayList<>();
    final Map<RejectReason, Integer> rejected = new HashMap<>();
    final List<Batch<Integer>> batches = new ArrayList<>();
    final List<Long> wakeRequests = new ArrayList<>();
    int failed;
    int failedBatches;
    /** Timers fire up to this late (uniformly), as on a loaded machine. */
    long timerJitter;
    /** Containers take up to this much longer than the profile says (uniformly). */
    long serviceJitter;
    /** Batches whose predicted answer (finish + half the overhead + margin) came after a member's deadline. */
    int predictedLate;

    VirtualCluster(SchedulerConfig config, long seed) {
        this.scheduler = new ModelScheduler<>(config, this);
        this.random = new SplittableRandom(seed);
    }

    /** Adds an available replica whose batch of b takes exactly beta + alpha·b, with the given round-trip overhead. */
    VirtualCluster replica(String id, long beta, long alpha, long overhead) {
        containers.put(id, new Container(beta, alpha, overhead / 2));
        scheduler.addReplica(id, 1, now);
        scheduler.setAvailable(id, true, now);
        return this;
    }

    /** Seeds a replica's profile with exact samples for sizes 1..max, as the profiling pass at registration does. */
    VirtualCluster profiled(String id, int max) {
        Container c = containers.get(id);
        for (int b = 1; b <= max; b++) {
            long service = c.beta + c.alpha * b;
            scheduler.profileSample(id, b, service, service + 2 * c.oneWay, now);
        }
        return this;
    }

    /** Makes a replica's batches {@code factor} times slower when they start in [from, until). */
    VirtualCluster slow(String id, int factor, long from, long until) {
        Container c = containers.get(id);
        c.slowFactor = factor;
        c.slowFrom = from;
        c.slowUntil = until;
        return this;
    }

    VirtualCluster failing(String id, double probability) {
        containers.get(id).failureProbability = probability;
        return this;
    }

    /** Open-loop Poisson arrivals at {@code rate} per second from now for {@code duration}, each due {@code slo} later. */
    VirtualCluster poisson(double rate, long duration, long slo) {
        long end = now + duration;
        long t = now;
        while (true) {
            t += (long) (-Math.log(1 - random.nextDouble()) / rate * 1e9);
            if (t >= end) {
                return this;
            }
            long at = t;
            at(at, () -> submit(at + slo));
        }
    }

    /** Gamma-distributed gaps with squared coefficient of variation {@code cv2} (shape 1/cv2), mean 1/rate. */
    VirtualCluster gamma(double rate, double cv2, long duration, long slo) {
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

    /** Submits one query now with the given deadline; returns its index. */
    int submit(long deadline) {
        int id = deadlines.size();
        deadlines.add(deadline);
        outcomes.add(0);
        answeredAt.add(-1L);
        scheduler.submit(id, deadline, now);
        return id;
    }

    void at(long t, Runnable action) {
        events.add(new Event(t, seq++, action));
    }

    /** Kills a replica at {@code t}: the scheduler loses it, its outstanding batches fail. */
    void kill(String id, long t) {
        at(t, () -> {
            containers.get(id).alive = false;
            scheduler.removeReplica(id, now);
            for (Batch<Integer> b : List.copyOf(inFlight.getOrDefault(id, List.of()))) {
                fail(b);
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

    /** Runs until nothing is left to happen. */
    void drain() {
        runUntil(Long.MAX_VALUE / 2);
    }

    @Override
    public void send(Batch<Integer> batch) {
        batches.add(batch);
        Container c = containers.get(batch.replica());
        long oh = 2 * c.oneWay;
        long predictedAnswer = batch.predictedFinish() + (oh - oh / 2) + scheduler.config().safetyMarginNanos();
        for (Query<Integer> q : batch.queries()) {
            if (q.deadline() < predictedAnswer && batch.predictedFinish() != batch.sentAt()) {
                predictedLate++;
                break;
            }
        }
        inFlight.computeIfAbsent(batch.replica(), k -> new ArrayList<>()).add(batch);
        long arrive = now + c.oneWay;
        long start = Math.max(arrive, c.freeAt);
        long finish = start + c.service(batch.size(), start) + (serviceJitter > 0 ? random.nextLong(serviceJitter) : 0);
        c.freeAt = finish;
        boolean fails = c.failureProbability > 0 && random.nextDouble() < c.failureProbability;
        at(finish + c.oneWay, () -> {
            if (!c.alive || !inFlight.get(batch.replica()).remove(batch)) {
                return;
            }
            if (fails) {
                failedBack(batch, scheduler.batchFailed(batch, batch.queries(), now));
                return;
            }
            for (Query<Integer> q : batch.queries()) {
                leave(q.payload());
                answeredAt.set(q.payload(), now);
            }
            scheduler.batchCompleted(batch, finish - start, now);
        });
    }

    private void fail(Batch<Integer> batch) {
        inFlight.get(batch.replica()).remove(batch);
        failedBack(batch, scheduler.batchFailed(batch, batch.queries(), now));
    }

    private void failedBack(Batch<Integer> batch, List<Query<Integer>> giveUp) {
        failedBatches++;
        for (Query<Integer> q : giveUp) {
            leave(q.payload());
            failed++;
        }
    }

    @Override
    public void reject(Query<Integer> query, RejectReason reason) {
        leave(query.payload());
        rejected.merge(reason, 1, Integer::sum);
    }

    @Override
    public void wakeAt(long nanos) {
        wakeRequests.add(nanos);
        long late = timerJitter > 0 ? random.nextLong(timerJitter) : 0;
        at(Math.max(nanos, now) + late, () -> scheduler.timer(now));
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

package io.servegate.benchmarks;

import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.ModelScheduler;
import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.scheduling.Query;
import io.servegate.core.scheduling.RejectReason;
import io.servegate.core.scheduling.SchedulerActions;
import io.servegate.core.scheduling.SchedulerConfig;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Scheduling decisions per second on one core, per policy: one operation is one query's arrival
 * at a {@link ModelScheduler} plus, in virtual time and in order, whatever falls due before it
 * (completions of the batches the scheduler sent, its wake-ups). So each query is submitted once
 * and leaves once (in a completed batch or a rejection), and the per-batch work (a completion,
 * a profile update) is shared among the batch's queries as it is in a live gateway.
 *
 * <p>One replica, exact β 5 ms + α 0.5 ms containers, SLO 20 ms, no transport overhead, evenly
 * spaced arrivals at {@code load} times the analytic capacity of 1,000/s (0.8: every query
 * answered; 4: overload, most rejected). Steady state: the replica is profiled before the
 * measurement and the run continues across iterations.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Thread)
public class SchedulingBenchmark implements SchedulerActions<Void> {

    private static final long MS = 1_000_000L;
    private static final long BETA = 5 * MS;
    private static final long ALPHA = MS / 2;
    private static final long SLO = 20 * MS;
    private static final String MODEL = "m";

    @Param({"clipper", "clockwork", "symphony"})
    String policy;

    @Param({"0.8", "4"})
    double load;

    private ModelScheduler<Void> scheduler;
    private final ArrayDeque<Batch<Void>> inFlight = new ArrayDeque<>();
    private final ArrayDeque<long[]> finishes = new ArrayDeque<>(); // {finish, service}, with inFlight
    private long replicaFree;
    private long now;
    private long gap;
    private long wake = Long.MAX_VALUE;
    private long rejected;

    @Setup
    public void setUp() {
        scheduler = new ModelScheduler<>(MODEL, SchedulerConfig.of(PolicyKind.of(policy), SLO), this);
        scheduler.addReplica("r0", 1, 0);
        for (int b = 1; b <= 64; b *= 2) {
            scheduler.profileSample("r0", MODEL, b, BETA + ALPHA * b, BETA + ALPHA * b, 0);
        }
        scheduler.setAvailable("r0", true, 0);
        gap = Math.round(1e9 / (1_000 * load));
    }

    @Benchmark
    public long arriveAndSettle() {
        long arrival = now + gap;
        while (true) {
            long finish = finishes.isEmpty() ? Long.MAX_VALUE : finishes.peekFirst()[0];
            if (finish <= arrival && finish <= wake) {
                long[] f = finishes.pollFirst();
                now = f[0];
                scheduler.batchCompleted(inFlight.pollFirst(), f[1], now);
            } else if (wake <= arrival) {
                now = wake;
                wake = Long.MAX_VALUE;
                scheduler.timer(now);
            } else {
                break;
            }
        }
        now = arrival;
        scheduler.submit(MODEL, null, now + SLO, now);
        return rejected;
    }

    @Override
    public void send(Batch<Void> batch) {
        long service = BETA + ALPHA * batch.size();
        replicaFree = Math.max(now, replicaFree) + service;
        inFlight.addLast(batch);
        finishes.addLast(new long[] {replicaFree, service});
    }

    @Override
    public void reject(Query<Void> query, RejectReason reason) {
        rejected++;
    }

    @Override
    public void wakeAt(long nanos) {
        wake = Math.max(nanos, now);
    }
}

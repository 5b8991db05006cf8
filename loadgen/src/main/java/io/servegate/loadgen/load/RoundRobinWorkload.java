package io.servegate.loadgen.load;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Spreads requests over several gateways in turn, as a round-robin load balancer in front of
 * them would; a target {@link #markDown marked down} (a gateway that was killed) gets no more, and
 * one {@link #add added} (a gateway that reported ready) takes its turn from then on.
 * For each target it records the latency of its predictions (not defaults) from the moment the
 * request was handed to it, so that gateways answering the same load can be compared.
 */
public final class RoundRobinWorkload implements Workload {

    private static final class Target {
        final Workload workload;
        final LatencyRecorder predicted = new LatencyRecorder();
        volatile boolean down;

        Target(Workload workload) {
            this.workload = workload;
        }
    }

    // targets are only ever appended, so an index read once stays valid
    private final List<Target> targets = new CopyOnWriteArrayList<>();
    private final AtomicLong turn = new AtomicLong();

    /** @param targets the gateways' workloads, each of one input per request */
    public RoundRobinWorkload(List<? extends Workload> targets) {
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("no targets");
        }
        targets.forEach(this::add);
    }

    @Override
    public int inputsPerRequest() {
        return 1;
    }

    @Override
    public CompletableFuture<?> send() {
        Target t = targets.get(next());
        long start = System.nanoTime();
        CompletableFuture<?> answer = t.workload.send();
        answer.whenComplete((result, failure) -> {
            if (failure == null && !(result instanceof GatewayAnswer a && a.isDefault())) {
                t.predicted.record(System.nanoTime() - start);
            }
        });
        return answer;
    }

    private int next() {
        int n = targets.size();
        for (int tries = 0; tries < n; tries++) {
            int i = (int) Math.floorMod(turn.getAndIncrement(), (long) n);
            if (!targets.get(i).down) {
                return i;
            }
        }
        throw new IllegalStateException("every target is down");
    }

    /** Adds a target to the rotation (a gateway the balancer saw ready); returns its index. */
    public synchronized int add(Workload target) {
        targets.add(new Target(target));
        return targets.size() - 1;
    }

    /** Sends nothing more to target {@code i}. */
    public void markDown(int i) {
        targets.get(i).down = true;
    }

    /** The latencies of target {@code i}'s predictions; call once, after the load has stopped. */
    public LatencySummary predictedLatency(int i) {
        return LatencySummary.of(targets.get(i).predicted.snapshot().histogram());
    }
}

package io.servegate.loadgen.load;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Spreads requests over several gateways in turn, as a round-robin load balancer in front of
 * them would; a target {@link #markDown marked down} (a gateway that was killed) gets no more.
 * For each target it records the latency of its predictions (not defaults) from the moment the
 * request was handed to it, so that gateways answering the same load can be compared.
 */
public final class RoundRobinWorkload implements Workload {

    private final List<? extends Workload> targets;
    private final LatencyRecorder[] predicted;
    private final AtomicIntegerArray down;
    private final AtomicLong turn = new AtomicLong();

    /** @param targets the gateways' workloads, each of one input per request */
    public RoundRobinWorkload(List<? extends Workload> targets) {
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("no targets");
        }
        this.targets = List.copyOf(targets);
        this.predicted = new LatencyRecorder[targets.size()];
        for (int i = 0; i < predicted.length; i++) {
            predicted[i] = new LatencyRecorder();
        }
        this.down = new AtomicIntegerArray(targets.size());
    }

    @Override
    public int inputsPerRequest() {
        return 1;
    }

    @Override
    public CompletableFuture<?> send() {
        int i = next();
        long start = System.nanoTime();
        CompletableFuture<?> answer = targets.get(i).send();
        answer.whenComplete((result, failure) -> {
            if (failure == null && !(result instanceof GatewayAnswer a && a.isDefault())) {
                predicted[i].record(System.nanoTime() - start);
            }
        });
        return answer;
    }

    private int next() {
        for (int tries = 0; tries < targets.size(); tries++) {
            int i = (int) Math.floorMod(turn.getAndIncrement(), (long) targets.size());
            if (down.get(i) == 0) {
                return i;
            }
        }
        throw new IllegalStateException("every target is down");
    }

    /** Sends nothing more to target {@code i}. */
    public void markDown(int i) {
        down.set(i, 1);
    }

    /** The latencies of target {@code i}'s predictions; call once, after the load has stopped. */
    public LatencySummary predictedLatency(int i) {
        return LatencySummary.of(predicted[i].snapshot().histogram());
    }
}

package io.servegate.benchmarks;

import io.servegate.gateway.batching.AimdBatchingPolicy;
import io.servegate.gateway.batching.Batch;
import io.servegate.gateway.batching.BatchQueue;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.Blackhole;

/**
 * {@link BatchQueue}: enqueue ({@code offer}) and dispatch ({@code tryDispatch} + {@code complete})
 * with an {@link AimdBatchingPolicy} pinned at batches of 32 (initial size = ceiling = 32, and
 * every batch meets the 20 ms SLO), no delayed batching and the gateway's default capacity (4096).
 *
 * <p>The queue takes the time from its caller as {@code now}; here it is a fixed virtual instant,
 * so the numbers are the queue's own cost, without {@code System.nanoTime()}, and each batch is
 * completed with an explicit latency of 5 ms (the {@code complete(batch, now, latency)} form the
 * gateway uses with the container-reported service time). Deadlines are spread over
 * [SLO/2, SLO) after {@code now}, so the earliest-deadline-first heap does real work and no task
 * ever expires.
 *
 * <ul>
 *   <li>{@link #cycle}: one thread offers 32 tasks, dispatches them as one batch and completes
 *       it; reported per task (ops = 32 per invocation).</li>
 *   <li>{@link #offerUncontended} / {@link #offerContended}: one shared queue; each operation
 *       offers one task, and every 32nd offer of a thread also dispatches and completes whatever
 *       batches it can. One thread versus {@code @Threads(2)} shows the cost of the queue's lock
 *       under contention (on a 2-core machine both threads really run at once).</li>
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class BatchQueueBenchmark {

    static final int BATCH = 32;
    static final int CAPACITY = 4096;
    static final long SLO_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    static final long BATCH_LATENCY_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    static final Consumer<Object> NO_EXPIRY = t -> {
        throw new IllegalStateException("no task should expire");
    };

    static BatchQueue<Object> newQueue() {
        return new BatchQueue<>(new AimdBatchingPolicy(SLO_NANOS, BATCH, 1, 0.9, BATCH), 0, CAPACITY);
    }

    /** Tasks and deadline offsets, reused cyclically. */
    @State(Scope.Thread)
    public static class Workload {
        static final int N = 1024; // a multiple of BATCH
        final Object[] tasks = new Object[N];
        final long[] deadlineOffsets = new long[N];
        int next;
        /** The virtual time: fixed, shared by all threads, so no task ever expires. */
        final long now = 1_000_000_000L;
        int offered;

        @Setup
        public void setUp() {
            SplittableRandom random = new SplittableRandom(1);
            for (int i = 0; i < N; i++) {
                tasks[i] = new Object();
                deadlineOffsets[i] = SLO_NANOS / 2 + random.nextLong(SLO_NANOS / 2);
            }
        }

        void offer(BatchQueue<Object> queue) {
            int i = next;
            next = (i + 1) & (N - 1);
            if (!queue.offer(tasks[i], now + deadlineOffsets[i], now)) {
                // Only if the other thread could not dispatch for a long while; keeps the
                // benchmark in a steady state instead of rejecting every offer.
                queue.drain();
            }
        }

        void dispatchAll(BatchQueue<Object> queue, Blackhole bh) {
            Batch<Object> batch;
            while ((batch = queue.tryDispatch(now, NO_EXPIRY)) != null) {
                bh.consume(batch);
                queue.complete(batch, now, BATCH_LATENCY_NANOS);
            }
        }
    }

    /** A queue of the benchmark thread's own. */
    @State(Scope.Thread)
    public static class PrivateQueue {
        BatchQueue<Object> queue;

        @Setup
        public void setUp() {
            queue = newQueue();
        }
    }

    /** A queue shared by all benchmark threads. */
    @State(Scope.Benchmark)
    public static class SharedQueue {
        BatchQueue<Object> queue;

        @Setup
        public void setUp() {
            queue = newQueue();
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void cycle(PrivateQueue q, Workload w, Blackhole bh) {
        BatchQueue<Object> queue = q.queue;
        for (int i = 0; i < BATCH; i++) {
            w.offer(queue);
        }
        Batch<Object> batch = queue.tryDispatch(w.now, NO_EXPIRY);
        if (batch == null || batch.size() != BATCH) {
            throw new IllegalStateException("expected a full batch, got " + batch);
        }
        bh.consume(batch);
        queue.complete(batch, w.now, BATCH_LATENCY_NANOS);
    }

    @Benchmark
    @Threads(1)
    public void offerUncontended(SharedQueue q, Workload w, Blackhole bh) {
        offerAndSometimesDispatch(q.queue, w, bh);
    }

    @Benchmark
    @Threads(2)
    public void offerContended(SharedQueue q, Workload w, Blackhole bh) {
        offerAndSometimesDispatch(q.queue, w, bh);
    }

    private static void offerAndSometimesDispatch(BatchQueue<Object> queue, Workload w, Blackhole bh) {
        w.offer(queue);
        if (++w.offered % BATCH == 0) {
            w.dispatchAll(queue, bh);
        }
    }
}

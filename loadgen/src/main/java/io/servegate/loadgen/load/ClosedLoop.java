package io.servegate.loadgen.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.function.ObjLongConsumer;

/**
 * Closed-loop load: each of N clients sends a request, waits for its answer, and sends the next
 * one at once, so the offered load adapts to the server (the load of a fixed user population).
 *
 * <p>Clients run from the start of the warm-up to the end of the measured window; a request is
 * measured if it starts after the warm-up and ends inside the window. Each client is a thread that
 * blocks on its request, so its wake-up is part of the latency, as it would be in a real caller.
 */
public final class ClosedLoop {

    private final int clients;
    private final Duration warmup;
    private final Duration duration;

    public ClosedLoop(int clients, Duration warmup, Duration duration) {
        if (clients < 1) {
            throw new IllegalArgumentException("clients must be at least 1, got " + clients);
        }
        if (warmup.isNegative() || duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException("warm-up must be ≥ 0 and duration > 0, got " + warmup + " and "
                    + duration);
        }
        this.clients = clients;
        this.warmup = warmup;
        this.duration = duration;
    }

    /** Runs the workload for warm-up plus duration and summarises the measured window. */
    public LoadResult run(Workload workload) throws InterruptedException {
        return run(workload, (result, nanos) -> { });
    }

    /**
     * Runs the workload for warm-up plus duration and summarises the measured window;
     * {@code observer} gets every measured successful answer and its latency in nanoseconds, on
     * the client thread that waited for it.
     */
    public LoadResult run(Workload workload, ObjLongConsumer<Object> observer) throws InterruptedException {
        LatencyRecorder recorder = new LatencyRecorder();
        long measureFrom = System.nanoTime() + warmup.toNanos();
        long end = measureFrom + duration.toNanos();
        List<Thread> threads = new ArrayList<>(clients);
        for (int i = 0; i < clients; i++) {
            Thread t = new Thread(() -> drive(workload, observer, recorder, measureFrom, end), "closed-loop-client-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        try {
            for (Thread t : threads) {
                t.join();
            }
        } catch (InterruptedException e) {
            threads.forEach(Thread::interrupt);
            throw e;
        }
        LatencyRecorder.Snapshot s = recorder.snapshot();
        double seconds = duration.toNanos() / 1e9;
        long ok = s.histogram().getTotalCount();
        return new LoadResult(workload.inputsPerRequest(), clients, seconds, ok, s.errors(), ok / seconds,
                ok * (double) workload.inputsPerRequest() / seconds, LatencySummary.of(s.histogram()),
                s.firstError() == null ? null : String.valueOf(s.firstError()));
    }

    private static void drive(Workload workload, ObjLongConsumer<Object> observer, LatencyRecorder recorder,
            long measureFrom, long end) {
        long start;
        while ((start = System.nanoTime()) < end && !Thread.currentThread().isInterrupted()) {
            try {
                Object answer = workload.send().get();
                long stop = System.nanoTime();
                if (start >= measureFrom && stop <= end) {
                    recorder.record(stop - start);
                    observer.accept(answer, stop - start);
                }
            } catch (ExecutionException | RuntimeException e) {
                if (start >= measureFrom && System.nanoTime() <= end) {
                    recorder.recordError(e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e);
                }
            } catch (InterruptedException e) {
                return;
            }
        }
    }
}

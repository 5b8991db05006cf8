package io.servegate.loadgen.load;

import io.servegate.workload.arrival.ArrivalPattern;
import io.servegate.workload.arrival.ArrivalSchedule;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.ObjLongConsumer;
import org.HdrHistogram.Histogram;

/**
 * Open-loop load: requests are sent on a schedule of a fixed mean rate (Poisson by default, or any
 * {@link ArrivalPattern}) whatever the server does, as independent users would send them, and each request's latency is measured from its
 * <em>intended</em> send time. A server (or client) that falls behind therefore shows its
 * backlog in the latencies instead of silently lowering the offered load (coordinated omission).
 *
 * <p>One driver thread (the caller's) sleeps until each intended time and hands the request to
 * the workload, which must not block ({@link Workload#send()} returns a future). If the driver
 * falls behind it sends at once to catch up; how far behind it was is reported as send lag, and
 * the requests it actually sent during the window as the achieved send rate.
 *
 * <p>A request is measured if its intended send time lies in the window after the warm-up; its
 * answer may arrive after the window. After the last arrival the driver waits up to the drain
 * time for outstanding answers; those still missing are reported as unanswered.
 */
public final class OpenLoop {

    private final double ratePerSecond;
    private final ArrivalPattern arrivals;
    private final Duration warmup;
    private final Duration duration;
    private final Duration drain;
    private final long seed;

    /**
     * @param ratePerSecond mean arrivals per second
     * @param warmup unmeasured time at the same rate before the window
     * @param duration the measured window
     * @param drain how long to wait for outstanding answers after the last arrival
     * @param seed seed of the arrival schedule
     */
    public OpenLoop(double ratePerSecond, Duration warmup, Duration duration, Duration drain, long seed) {
        this(ratePerSecond, ArrivalPattern.poisson(), warmup, duration, drain, seed);
    }

    /**
     * @param ratePerSecond mean arrivals per second
     * @param arrivals the arrival process
     * @param warmup unmeasured time at the same rate before the window
     * @param duration the measured window
     * @param drain how long to wait for outstanding answers after the last arrival
     * @param seed seed of the arrival schedule
     */
    public OpenLoop(double ratePerSecond, ArrivalPattern arrivals, Duration warmup, Duration duration,
            Duration drain, long seed) {
        if (!(ratePerSecond > 0) || Double.isInfinite(ratePerSecond)) {
            throw new IllegalArgumentException("rate must be positive and finite, got " + ratePerSecond);
        }
        if (warmup.isNegative() || duration.isNegative() || duration.isZero() || drain.isNegative()) {
            throw new IllegalArgumentException("warm-up and drain must be ≥ 0 and duration > 0, got " + warmup + ", "
                    + drain + " and " + duration);
        }
        this.ratePerSecond = ratePerSecond;
        this.arrivals = arrivals;
        this.warmup = warmup;
        this.duration = duration;
        this.drain = drain;
        this.seed = seed;
    }

    /** Runs the workload and summarises the measured window. */
    public OpenLoopResult run(Workload workload) throws InterruptedException {
        return run(workload, (result, nanos) -> { });
    }

    /**
     * Runs the workload and summarises the measured window; {@code observer} gets every measured
     * successful answer and its latency in nanoseconds, on whatever thread completed it.
     */
    public OpenLoopResult run(Workload workload, ObjLongConsumer<Object> observer) throws InterruptedException {
        ArrivalSchedule schedule = new ArrivalSchedule(arrivals.at(ratePerSecond), seed);
        LatencyRecorder recorder = new LatencyRecorder();
        Histogram lag = new Histogram(3);
        AtomicLong outstanding = new AtomicLong();
        AtomicLong measuredOutstanding = new AtomicLong();
        boolean[] closed = {false}; // guarded by itself: set once the results are taken
        long scheduled = 0;
        long sentInWindow = 0;

        long start = System.nanoTime();
        long measureFrom = start + warmup.toNanos();
        long end = measureFrom + duration.toNanos();
        while (true) {
            long offset = schedule.next();
            if (offset >= end - start) {
                break;
            }
            long intended = start + offset;
            long now;
            while ((now = System.nanoTime()) < intended) {
                LockSupport.parkNanos(intended - now);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            boolean measured = intended >= measureFrom;
            if (measured) {
                scheduled++;
                lag.recordValue(now - intended);
                measuredOutstanding.incrementAndGet();
            }
            if (now >= measureFrom && now < end) {
                sentInWindow++;
            }
            outstanding.incrementAndGet();
            long sendTime = intended;
            CompletableFuture<?> answer;
            try {
                answer = workload.send();
            } catch (RuntimeException e) {
                answer = CompletableFuture.failedFuture(e);
            }
            answer.whenComplete((result, failure) -> {
                long latency = System.nanoTime() - sendTime;
                if (measured) {
                    // an answer after the drain is unanswered: the recorder and the observer both miss it
                    synchronized (closed) {
                        if (!closed[0]) {
                            if (failure == null) {
                                recorder.record(latency);
                                observer.accept(result, latency);
                            } else {
                                recorder.recordError(unwrap(failure));
                            }
                            measuredOutstanding.decrementAndGet();
                        }
                    }
                }
                outstanding.decrementAndGet();
            });
        }

        long drainUntil = System.nanoTime() + drain.toNanos();
        while (outstanding.get() > 0 && System.nanoTime() < drainUntil) {
            Thread.sleep(5);
        }
        long unanswered;
        LatencyRecorder.Snapshot s;
        synchronized (closed) {
            closed[0] = true;
            unanswered = measuredOutstanding.get();
            s = recorder.snapshot();
        }
        double seconds = duration.toNanos() / 1e9;
        long ok = s.histogram().getTotalCount();
        boolean anyLag = lag.getTotalCount() > 0;
        return new OpenLoopResult(ratePerSecond, seconds, scheduled, scheduled / seconds, sentInWindow,
                sentInWindow / seconds, anyLag ? ms(lag.getValueAtPercentile(50)) : 0,
                anyLag ? ms(lag.getValueAtPercentile(99)) : 0, anyLag ? ms(lag.getMaxValue()) : 0, ok, s.errors(),
                unanswered, ok / seconds, LatencySummary.of(s.histogram()),
                s.firstError() == null ? null : String.valueOf(s.firstError()));
    }

    private static Throwable unwrap(Throwable t) {
        return (t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null
                ? t.getCause() : t;
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}

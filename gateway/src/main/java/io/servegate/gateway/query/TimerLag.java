package io.servegate.gateway.query;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * How late the gateway's timers run: the median lateness of a probe that re-arms itself every few
 * milliseconds on the deadline thread, over the {@link #WINDOW} before its latest run. A gateway
 * short of CPU (a noisy neighbour, a build on the same cores) runs every timer late, and then
 * every default is late too: answering a query at once with its app's overload response beats
 * answering it after its SLO.
 *
 * <p>The median, not the worst: a single pause (a GC, or a burst of defaults when a stalled
 * batch's queries reach their deadlines together) is over by the time it is measured, and
 * shedding the queries that follow it turns a 100 ms pause into a quarter second of lost answers.
 * A CPU that stays short makes most runs of the probe late. Thread-safe; time is read from the
 * clock it was made with.
 */
public final class TimerLag {

    /** How long a measured lateness counts. */
    static final Duration WINDOW = Duration.ofMillis(250);

    private final LongSupplier clock;
    private final double shedFraction;
    private final long windowNanos = WINDOW.toNanos();
    /** The probe's runs of the last window, oldest first: {when, how late}. Guarded by {@code this}. */
    private final ArrayDeque<long[]> runs = new ArrayDeque<>();
    private volatile long lag;

    /**
     * @param shedFraction a query is shed when the lag exceeds this share of the time it has left
     *                     (0: never)
     */
    public TimerLag(LongSupplier clock, double shedFraction, MeterRegistry meters) {
        if (!(shedFraction >= 0)) {
            throw new IllegalArgumentException("shedFraction must be >= 0, got " + shedFraction);
        }
        this.clock = clock;
        this.shedFraction = shedFraction;
        Gauge.builder("servegate.timer.lag", this, l -> l.lagNanos() / 1e9).baseUnit("seconds")
                .description("The median lateness of the gateway's timer probe (every 5 ms) over the last 250 ms; "
                        + "queries whose time left it would eat get their app's overload response at once")
                .register(meters);
    }

    /** The median lateness of the probe's runs in the window before its latest run, in nanoseconds. */
    public long lagNanos() {
        return lag;
    }

    /** Whether a query with {@code leftNanos} before its deadline should be shed now rather than timed. */
    public boolean sheds(long leftNanos) {
        return shedFraction > 0 && lag > shedFraction * leftNanos;
    }

    /**
     * Probes {@code timers} every {@code period}: each probe re-arms itself and reports how late
     * it ran, so the lag is measured even while no query arrives. One probe per instance.
     *
     * @return disposing it stops the probe
     */
    public Disposable probe(Scheduler timers, Duration period) {
        Probe p = new Probe(timers, period.toNanos());
        p.arm();
        return p;
    }

    /** The probe's run due at {@code dueNanos} ran now. */
    private synchronized void ran(long dueNanos) {
        long now = clock.getAsLong();
        while (!runs.isEmpty() && now - runs.peekFirst()[0] > windowNanos) {
            runs.pollFirst();
        }
        runs.addLast(new long[] {now, Math.max(0, now - dueNanos)});
        long[] lateness = runs.stream().mapToLong(r -> r[1]).sorted().toArray();
        lag = lateness[(lateness.length - 1) / 2]; // the lower median: one late run of two is a pause
    }

    private final class Probe implements Disposable {
        private final Scheduler timers;
        private final long period;
        private volatile boolean disposed;

        Probe(Scheduler timers, long period) {
            this.timers = timers;
            this.period = period;
        }

        void arm() {
            long due = clock.getAsLong() + period;
            timers.schedule(() -> {
                ran(due);
                if (!disposed) {
                    arm();
                }
            }, period, TimeUnit.NANOSECONDS);
        }

        @Override
        public void dispose() {
            disposed = true;
        }

        @Override
        public boolean isDisposed() {
            return disposed;
        }
    }
}

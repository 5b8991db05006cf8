package io.servegate.gateway.query;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * How late the gateway's own timers run: the worst lateness of the last {@link #WINDOW} among a
 * probe that re-arms itself every few milliseconds and the query deadline timers that fired. A
 * gateway short of CPU (a noisy neighbour, a GC pause, a build on the same cores) runs its
 * deadline timers late, and then every default is late too: answering a query at once with its
 * app's overload response beats answering it seconds after its SLO. Thread-safe; time is read
 * from the clock it was made with.
 */
public final class TimerLag {

    /** How long a measured lateness counts. */
    static final Duration WINDOW = Duration.ofMillis(250);

    private final LongSupplier clock;
    private final double shedFraction;
    private final long windowNanos = WINDOW.toNanos();
    // the worst lateness measured in the current window, and when it was measured
    private long worst;
    private long worstAt = Long.MIN_VALUE;

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
                .description("The worst lateness of the gateway's timers over the last 250 ms; queries whose "
                        + "time left it would eat get their app's overload response at once")
                .register(meters);
    }

    /** A timer due at {@code dueNanos} ran now. */
    public void fired(long dueNanos) {
        long now = clock.getAsLong();
        long late = Math.max(0, now - dueNanos);
        synchronized (this) {
            if (worstAt == Long.MIN_VALUE || now - worstAt > windowNanos || late >= worst) {
                worst = late;
                worstAt = now;
            }
        }
    }

    /** The worst lateness of the last {@link #WINDOW}, in nanoseconds; 0 when none was measured. */
    public synchronized long lagNanos() {
        return worstAt == Long.MIN_VALUE || clock.getAsLong() - worstAt > windowNanos ? 0 : worst;
    }

    /** Whether a query with {@code leftNanos} before its deadline should be shed now rather than timed. */
    public boolean sheds(long leftNanos) {
        return shedFraction > 0 && lagNanos() > shedFraction * leftNanos;
    }

    /**
     * Probes {@code timers} every {@code period}: each probe re-arms itself and reports how late
     * it ran, so the lag is measured even while no query arrives.
     *
     * @return disposing it stops the probe
     */
    public Disposable probe(Scheduler timers, Duration period) {
        Probe p = new Probe(timers, period.toNanos());
        p.arm();
        return p;
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
                fired(due);
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

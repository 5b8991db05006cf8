package io.servegate.gateway.query;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.core.cache.PredictionCache;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.SelectionConfig;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The gateway protects its own deadlines, in virtual time: while its timers run late, a query
 * whose default would come after its SLO gets its app's overload response at once.
 */
class TimerLagTest {

    private static final long MS = 1_000_000L;
    private static final float[] INPUT = {1f, 2f, 3f};

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final AtomicInteger submissions = new AtomicInteger();
    private VirtualTimeScheduler time;
    /** How far the clock runs ahead of the virtual timers: how late they are. */
    private long skew;

    @BeforeEach
    void virtualTime() {
        time = VirtualTimeScheduler.getOrSet();
    }

    @AfterEach
    void realTime() {
        VirtualTimeScheduler.reset();
    }

    private long now() {
        return time.now(TimeUnit.NANOSECONDS) + skew;
    }

    private static Application app(Application.OverloadResponse overload) {
        return new Application("app", "floats", "fallback", 50_000, List.of("m"), SelectionConfig.SINGLE, overload);
    }

    /** A service whose container never answers: every query is timed to its deadline. */
    private PredictionService service(TimerLag lag) {
        return new PredictionService(new PredictionCache(false, 1 << 20, meters), (model, version, input, deadline) -> {
            submissions.incrementAndGet();
            return new CompletableFuture<>();
        }, this::now, meters, Duration.ZERO, time, time).shedding(lag);
    }

    /**
     * The virtual timers, each run {@code late} after its due time: a timer thread short of CPU.
     * Only what the probe uses, one-shot delayed tasks, is delegated.
     */
    private Scheduler late(AtomicLong late) {
        return new Scheduler() {
            @Override
            public Disposable schedule(Runnable task) {
                return time.schedule(task, late.get(), TimeUnit.NANOSECONDS);
            }

            @Override
            public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
                return time.schedule(task, unit.toNanos(delay) + late.get(), TimeUnit.NANOSECONDS);
            }

            @Override
            public Worker createWorker() {
                throw new UnsupportedOperationException();
            }
        };
    }

    @Test
    void aTimerThreadThatStaysBehindIsMeasuredAndRecoveredFrom() {
        TimerLag lag = new TimerLag(this::now, 1, meters);
        AtomicLong late = new AtomicLong();
        Disposable probe = lag.probe(late(late), Duration.ofMillis(5));
        time.advanceTimeBy(Duration.ofMillis(300));
        assertThat(lag.lagNanos()).isZero();

        late.set(40 * MS); // every run from now on is 40 ms late
        time.advanceTimeBy(Duration.ofMillis(300));
        assertThat(lag.lagNanos()).isEqualTo(40 * MS);
        assertThat(meters.get("servegate.timer.lag").gauge().value()).isEqualTo(0.040);
        assertThat(lag.sheds(30 * MS)).isTrue(); // its default would come 10 ms after its deadline
        assertThat(lag.sheds(50 * MS)).isFalse();

        late.set(0);
        time.advanceTimeBy(TimerLag.WINDOW.plusMillis(50));
        assertThat(lag.lagNanos()).isZero();
        assertThat(lag.sheds(1)).isFalse();
        probe.dispose();
    }

    @Test
    void aProbeOfAnyPeriodKeepsItsWholeWindow() {
        TimerLag lag = new TimerLag(this::now, 1, meters);
        AtomicLong late = new AtomicLong();
        Disposable probe = lag.probe(late(late), Duration.ofMillis(1)); // 250 runs a window
        time.advanceTimeBy(Duration.ofMillis(300));
        late.set(3 * MS);
        time.advanceTimeBy(Duration.ofMillis(100)); // 25 late runs among 175: the median is on time
        assertThat(lag.lagNanos()).isZero();
        time.advanceTimeBy(Duration.ofMillis(300));
        assertThat(lag.lagNanos()).isEqualTo(3 * MS);
        probe.dispose();
    }

    @Test
    void aPauseThatIsOverShedsNothing() {
        TimerLag lag = new TimerLag(this::now, 1, meters);
        AtomicLong late = new AtomicLong();
        Disposable probe = lag.probe(late(late), Duration.ofMillis(5));
        time.advanceTimeBy(Duration.ofMillis(300));
        late.set(150 * MS); // the run armed next is 150 ms late (a GC pause, a burst of defaults)...
        time.advanceTimeBy(Duration.ofMillis(5));
        late.set(0); // ...and the runs after it on time
        for (int i = 0; i < 60; i++) {
            time.advanceTimeBy(Duration.ofMillis(5));
            assertThat(lag.sheds(10 * MS)).as("%d ms after the pause", 5 * i).isFalse();
        }
        probe.dispose();
    }

    @Test
    void aLateDeadlineIsMeasuredButShedsNothing() {
        TimerLag lag = new TimerLag(this::now, 1, meters);
        PredictionService service = service(lag);
        service.predict(app(Application.OverloadResponse.DEFAULT), "m", "1", TensorType.FLOATS, INPUT, now())
                .subscribe();
        time.advanceTimeBy(Duration.ofMillis(10));
        skew = 80 * MS; // the deadline fires 80 ms late
        time.advanceTimeBy(Duration.ofMillis(40));
        assertThat(meters.get("servegate.deadline.lag").timer().max(TimeUnit.MILLISECONDS)).isEqualTo(80);
        assertThat(lag.lagNanos()).as("many timers firing together are not a starved CPU").isZero();
    }

    @Test
    void whileTimersLagAQueryGetsItsAppsOverloadResponseAtOnce() {
        TimerLag lag = new TimerLag(this::now, 0.25, meters);
        PredictionService service = service(lag);
        List<Prediction> answers = new ArrayList<>();
        List<Throwable> errors = new ArrayList<>();

        // on time: the query waits for its deadline, 50 ms
        service.predict(app(Application.OverloadResponse.DEFAULT), "m", "1", TensorType.FLOATS, INPUT, now())
                .subscribe(answers::add, errors::add);
        assertThat(answers).isEmpty();
        time.advanceTimeBy(Duration.ofMillis(50));
        assertThat(answers).hasSize(1);
        assertThat(submissions).hasValue(1);

        AtomicLong late = new AtomicLong(20 * MS); // the timers run 20 ms late: more than a quarter of 50 ms
        Disposable probe = lag.probe(late(late), Duration.ofMillis(5));
        time.advanceTimeBy(Duration.ofMillis(300));
        answers.clear();
        service.predict(app(Application.OverloadResponse.DEFAULT), "m", "1", TensorType.FLOATS, INPUT, now())
                .subscribe(answers::add, errors::add);
        assertThat(answers).hasSize(1); // at once, not after the SLO
        assertThat(answers.get(0).isDefault()).isTrue();
        assertThat(answers.get(0).output()).isEqualTo("fallback");
        assertThat(answers.get(0).explanation()).contains("the gateway is overloaded: its timers run late");
        service.predict(app(Application.OverloadResponse.REJECT), "m", "1", TensorType.FLOATS, INPUT, now())
                .subscribe(answers::add, errors::add);
        assertThat(errors).singleElement().isInstanceOf(OverloadRejectedException.class);
        assertThat(submissions).as("shed queries reach no replica").hasValue(1);
        probe.dispose();
    }
}

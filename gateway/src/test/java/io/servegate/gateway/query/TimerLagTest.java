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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
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

    @Test
    void theLagIsTheWorstLatenessOfTheLastQuarterSecond() {
        TimerLag lag = new TimerLag(this::now, 0.25, meters);
        assertThat(lag.lagNanos()).isZero();
        time.advanceTimeBy(Duration.ofMillis(40));
        lag.fired(10 * MS); // ran 30 ms late
        lag.fired(35 * MS); // 5 ms late: the worst still counts
        assertThat(lag.lagNanos()).isEqualTo(30 * MS);
        assertThat(meters.get("servegate.timer.lag").gauge().value()).isEqualTo(0.030);
        assertThat(lag.sheds(100 * MS)).isTrue();  // 30 ms would eat over a quarter of 100 ms
        assertThat(lag.sheds(200 * MS)).isFalse();
        time.advanceTimeBy(TimerLag.WINDOW.plusMillis(1));
        assertThat(lag.lagNanos()).isZero();
        assertThat(lag.sheds(1)).isFalse();
    }

    @Test
    void theProbeMeasuresATimerThreadThatFallsBehind() {
        TimerLag lag = new TimerLag(this::now, 0.25, meters);
        Disposable probe = lag.probe(time, Duration.ofMillis(5));
        time.advanceTimeBy(Duration.ofMillis(50));
        assertThat(lag.lagNanos()).isZero(); // virtual timers run on time
        skew = 40 * MS; // the timer thread fell 40 ms behind the clock
        time.advanceTimeBy(Duration.ofMillis(5));
        assertThat(lag.lagNanos()).isEqualTo(40 * MS);
        probe.dispose();
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

        lag.fired(now() - 20 * MS); // a timer ran 20 ms late: more than a quarter of a 50 ms budget
        service.predict(app(Application.OverloadResponse.DEFAULT), "m", "1", TensorType.FLOATS, INPUT, now())
                .subscribe(answers::add, errors::add);
        assertThat(answers).hasSize(2); // at once, not after the SLO
        assertThat(answers.get(1).isDefault()).isTrue();
        assertThat(answers.get(1).output()).isEqualTo("fallback");
        assertThat(answers.get(1).explanation()).contains("the gateway is overloaded: its timers run late");
        service.predict(app(Application.OverloadResponse.REJECT), "m", "1", TensorType.FLOATS, INPUT, now())
                .subscribe(answers::add, errors::add);
        assertThat(errors).singleElement().isInstanceOf(OverloadRejectedException.class);
        assertThat(submissions).as("shed queries reach no replica").hasValue(1);
    }

    @Test
    void aDeadlineTimerThatFiresLateIsMeasured() {
        TimerLag lag = new TimerLag(this::now, 0.25, meters);
        PredictionService service = service(lag);
        service.predict(app(Application.OverloadResponse.DEFAULT), "m", "1", TensorType.FLOATS, INPUT, now())
                .subscribe();
        time.advanceTimeBy(Duration.ofMillis(10));
        skew = 15 * MS; // the deadline thread falls 15 ms behind
        time.advanceTimeBy(Duration.ofMillis(40));
        assertThat(lag.lagNanos()).isEqualTo(15 * MS);
    }
}

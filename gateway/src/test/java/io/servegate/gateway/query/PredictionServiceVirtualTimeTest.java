package io.servegate.gateway.query;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.core.cache.PredictionCache;
import io.servegate.core.scheduling.Priority;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.dispatch.DispatchException;
import io.servegate.gateway.dispatch.DispatchFailure;
import io.servegate.gateway.dispatch.Dispatcher;
import io.servegate.gateway.registry.Application;
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
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The hard deadline in virtual time: a query whose prediction is late gets the default exactly
 * at its SLO, never later, and the late prediction still fills the cache.
 */
class PredictionServiceVirtualTimeTest {

    private static final Application APP = new Application("app", "floats", "fallback", 20_000, List.of("m"));
    private static final float[] INPUT = {1f, 2f, 3f};

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final PredictionCache cache = new PredictionCache(true, 1 << 20, meters);
    private final AtomicInteger submissions = new AtomicInteger();

    /** Every test runs on one virtual clock, which the services built below also time their deadlines on. */
    @BeforeEach
    void virtualTime() {
        VirtualTimeScheduler.getOrSet();
    }

    @AfterEach
    void realTime() {
        VirtualTimeScheduler.reset();
    }

    private static long virtualNow() {
        return VirtualTimeScheduler.get().now(TimeUnit.NANOSECONDS);
    }

    /** A dispatcher whose container answers {@code latency} after the submission, in virtual time. */
    private PredictionService serviceAnsweringAfter(Duration latency, String output) {
        return new PredictionService(cache, (model, version, input, deadline) -> {
            submissions.incrementAndGet();
            CompletableFuture<String> f = new CompletableFuture<>();
            VirtualTimeScheduler.get().schedule(() -> f.complete(output), latency.toNanos(), TimeUnit.NANOSECONDS);
            return f;
        }, PredictionServiceVirtualTimeTest::virtualNow, meters, Duration.ZERO, VirtualTimeScheduler.get(), VirtualTimeScheduler.get());
    }

    @Test
    void aLatePredictionGivesTheDefaultExactlyAtTheSloAndStillFillsTheCache() {
        VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();
        try {
            PredictionService service = serviceAnsweringAfter(Duration.ofMillis(35), "7");
            List<Prediction> answers = new ArrayList<>();
            List<Long> answeredAt = new ArrayList<>();
            service.predict(APP, "m", "1", TensorType.FLOATS, INPUT, virtualNow()).subscribe(p -> {
                answers.add(p);
                answeredAt.add(virtualNow());
            });
            time.advanceTimeBy(Duration.ofMillis(19));
            assertThat(answers).isEmpty();
            time.advanceTimeBy(Duration.ofMillis(1));
            assertThat(answers).hasSize(1);
            assertThat(answers.get(0).isDefault()).isTrue();
            assertThat(answers.get(0).output()).isEqualTo("fallback");
            assertThat(answers.get(0).explanation()).isEqualTo(DefaultReason.DEADLINE.explanation());
            assertThat(answeredAt.get(0)).isEqualTo(TimeUnit.MILLISECONDS.toNanos(20));

            time.advanceTimeBy(Duration.ofMillis(20)); // the container answers at 35 ms, into the cache
            service.predict(APP, "m", "1", TensorType.FLOATS, INPUT, virtualNow()).subscribe(answers::add);
            assertThat(answers).hasSize(2);
            assertThat(answers.get(1)).isEqualTo(Prediction.of("7"));
            assertThat(submissions).hasValue(1);
        } finally {
            VirtualTimeScheduler.reset();
        }
    }

    @Test
    void theAppsTenantReachesTheDispatcherAndAShedQueryGetsTheOverloadResponseAndIsCounted() {
        List<Tenant> seen = new ArrayList<>();
        Dispatcher shedding = new Dispatcher() {
            @Override
            public CompletableFuture<String> submit(String model, String version, Object input, long deadlineNanos) {
                return submit(model, version, input, deadlineNanos, Tenant.DEFAULT);
            }

            @Override
            public CompletableFuture<String> submit(String model, String version, Object input, long deadlineNanos,
                    Tenant tenant) {
                seen.add(tenant);
                return CompletableFuture.failedFuture(new DispatchException(DispatchFailure.SHED, "tiers"));
            }
        };
        PredictionService service = new PredictionService(cache, shedding, PredictionServiceVirtualTimeTest::virtualNow,
                meters, Duration.ZERO, VirtualTimeScheduler.get(), VirtualTimeScheduler.get());
        Application low = new Application("low", "floats", "fallback", 20_000, List.of("m"), null, null, null,
                Priority.SHEDDABLE, 2);
        Prediction p = service.predict(low, "m", "1", TensorType.FLOATS, INPUT, virtualNow()).block();
        assertThat(seen).containsExactly(new Tenant("low", Priority.SHEDDABLE, 2));
        assertThat(p.isDefault()).isTrue();
        assertThat(p.explanation()).startsWith(DefaultReason.SHED.explanation());
        Application rejecting = new Application("rejecting", "floats", "fallback", 20_000, List.of("m"), null,
                Application.OverloadResponse.REJECT, null, Priority.STANDARD, 1);
        StepVerifier.create(service.predict(rejecting, "m", "1", TensorType.FLOATS, new float[] {9f}, virtualNow()))
                .expectError(OverloadRejectedException.class).verify();
        assertThat(meters.get("servegate.shed").tag("app", "low").tag("priority", "sheddable").counter().count())
                .isEqualTo(1);
        assertThat(meters.get("servegate.shed").tag("app", "rejecting").tag("priority", "standard").counter().count())
                .isEqualTo(1);
    }

    @Test
    void aDeadlineMarginSendsTheDefaultThatMuchEarlier() {
        VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();
        try {
            PredictionService service = new PredictionService(cache, (model, version, input, deadline) ->
                    new CompletableFuture<>(), PredictionServiceVirtualTimeTest::virtualNow, meters,
                    Duration.ofMillis(2), VirtualTimeScheduler.get(), VirtualTimeScheduler.get());
            List<Long> answeredAt = new ArrayList<>();
            service.predict(APP, "m", "1", TensorType.FLOATS, INPUT, virtualNow())
                    .subscribe(p -> answeredAt.add(virtualNow()));
            time.advanceTimeBy(Duration.ofMillis(17));
            assertThat(answeredAt).isEmpty();
            time.advanceTimeBy(Duration.ofMillis(1));
            assertThat(answeredAt).containsExactly(TimeUnit.MILLISECONDS.toNanos(18));
        } finally {
            VirtualTimeScheduler.reset();
        }
    }

    @Test
    void aDeadlineTimerThatRunsLateIsMeasuredAndItsAnswerCountedLate() {
        VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();
        try {
            // the clock runs ahead of the timer's scheduler by `stall`: the timer thread ran that late
            AtomicLong stall = new AtomicLong();
            PredictionService service = new PredictionService(cache, (model, version, input, deadline) ->
                    new CompletableFuture<>(), () -> virtualNow() + stall.get(), meters, Duration.ZERO,
                    VirtualTimeScheduler.get(), VirtualTimeScheduler.get());
            List<Prediction> answers = new ArrayList<>();
            service.predict(APP, "m", "1", TensorType.FLOATS, INPUT, virtualNow()).subscribe(answers::add);
            time.advanceTimeBy(Duration.ofMillis(20));
            service.predict(APP, "m", "1", TensorType.FLOATS, new float[] {9f}, virtualNow()).subscribe(answers::add);
            stall.set(TimeUnit.MILLISECONDS.toNanos(3));
            time.advanceTimeBy(Duration.ofMillis(20));

            assertThat(answers).hasSize(2).allMatch(Prediction::isDefault);
            Timer lag = meters.get("servegate.deadline.lag").timer();
            assertThat(lag.count()).isEqualTo(2);
            assertThat(lag.max(TimeUnit.MILLISECONDS)).isEqualTo(3.0);
            assertThat(lag.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(3.0);
            // the first answered at the SLO, the second 3 ms after it: one late answer
            assertThat(meters.get("servegate.answers.late").tag("app", "app").counter().count()).isEqualTo(1.0);
            assertThat(meters.get("servegate.request.latency").tag("app", "app").tag("default", "true").timer()
                    .count()).isEqualTo(2);
        } finally {
            VirtualTimeScheduler.reset();
        }
    }

    @Test
    void aQueryTimedOnItsEventLoopGetsItsDefaultThereAndNeverTouchesTheDeadlineThread() {
        VirtualTimeScheduler loop = VirtualTimeScheduler.getOrSet();
        // the service's own timer and defaults scheduler: a clock that never moves, so a deadline timed there never fires
        VirtualTimeScheduler stopped = VirtualTimeScheduler.create();
        try {
            PredictionService service = new PredictionService(cache, (model, version, input, deadline) ->
                    new CompletableFuture<>(), PredictionServiceVirtualTimeTest::virtualNow, meters, Duration.ZERO,
                    stopped, stopped);
            List<Long> answeredAt = new ArrayList<>();
            service.predict(APP, "m", "1", TensorType.FLOATS, INPUT, virtualNow())
                    .contextWrite(context -> PredictionService.timedOn(context, loop))
                    .subscribe(p -> answeredAt.add(virtualNow()));
            loop.advanceTimeBy(Duration.ofMillis(19));
            assertThat(answeredAt).isEmpty();
            loop.advanceTimeBy(Duration.ofMillis(1));
            assertThat(answeredAt).containsExactly(TimeUnit.MILLISECONDS.toNanos(20));
        } finally {
            stopped.dispose();
            VirtualTimeScheduler.reset();
        }
    }

    @Test
    void aTimelyPredictionPassesThroughAndTheNextIdenticalQueryHitsTheCache() {
        PredictionService service = serviceAnsweringAfter(Duration.ofMillis(12), "[0.25,0.75]");
        StepVerifier.withVirtualTime(() -> service.predict(APP, "m", "1", TensorType.FLOATS, INPUT, virtualNow()))
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(12))
                .assertNext(p -> assertThat(p).isEqualTo(Prediction.of("[0.25,0.75]")))
                .verifyComplete();
        StepVerifier.withVirtualTime(() -> service.predict(APP, "m", "1", TensorType.FLOATS, INPUT, virtualNow()))
                .assertNext(p -> assertThat(p.output()).isEqualTo("[0.25,0.75]"))
                .verifyComplete();
        assertThat(submissions).as("the second query never reached the dispatcher").hasValue(1);
    }

    @Test
    void aDispatcherFailureGivesTheDefaultAtOnceWithItsReason() {
        PredictionService service = new PredictionService(cache, (model, version, input, deadline) ->
                CompletableFuture.failedFuture(new PredictionException(DefaultReason.NO_REPLICA, "model m:1")),
                PredictionServiceVirtualTimeTest::virtualNow, meters, Duration.ZERO, Schedulers.immediate(), Schedulers.immediate());
        StepVerifier.withVirtualTime(() -> service.predict(APP, "m", "1", TensorType.FLOATS, INPUT, virtualNow()))
                .assertNext(p -> {
                    assertThat(p.isDefault()).isTrue();
                    assertThat(p.explanation()).contains("no ready replica").contains("model m:1");
                })
                .verifyComplete();
        assertThat(meters.get("servegate.defaults").tag("reason", "no_replica").counter().count()).isEqualTo(1.0);
    }

    @Test
    void anAppWithoutAModelGetsTheDefault() {
        PredictionService service = serviceAnsweringAfter(Duration.ZERO, "x");
        StepVerifier.withVirtualTime(() -> service.predict(APP, null, null, TensorType.FLOATS, INPUT, virtualNow()))
                .assertNext(p -> assertThat(p.explanation()).startsWith(DefaultReason.NO_MODEL.explanation()))
                .verifyComplete();
        assertThat(submissions).hasValue(0);
    }
    /** A prediction already in the cache is answered on subscription, with no deadline timer scheduled. */
    @Test
    void aCacheHitIsAnsweredWithoutADeadlineTimer() {
        VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();
        AtomicInteger timers = new AtomicInteger();
        Scheduler counting = new Scheduler() {
            @Override
            public Disposable schedule(Runnable task) {
                return time.schedule(task);
            }

            @Override
            public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
                timers.incrementAndGet();
                return time.schedule(task, delay, unit);
            }

            @Override
            public Worker createWorker() {
                return time.createWorker();
            }
        };
        try {
            PredictionService service = new PredictionService(cache, (model, version, input, deadline) -> {
                submissions.incrementAndGet();
                CompletableFuture<String> f = new CompletableFuture<>();
                time.schedule(() -> f.complete("7"), 5, TimeUnit.MILLISECONDS);
                return f;
            }, PredictionServiceVirtualTimeTest::virtualNow, meters, Duration.ZERO, counting, counting);
            List<Prediction> answers = new ArrayList<>();
            service.predict(APP, "m", "1", TensorType.FLOATS, INPUT, virtualNow()).subscribe(answers::add);
            assertThat(timers).hasValue(1); // a miss waits for the container, against its deadline
            time.advanceTimeBy(Duration.ofMillis(5));

            service.predict(APP, "m", "1", TensorType.FLOATS, INPUT, virtualNow()).subscribe(answers::add);
            assertThat(answers).containsExactly(Prediction.of("7"), Prediction.of("7"));
            assertThat(timers).hasValue(1);
            assertThat(submissions).hasValue(1);
        } finally {
            VirtualTimeScheduler.reset();
        }
    }
}

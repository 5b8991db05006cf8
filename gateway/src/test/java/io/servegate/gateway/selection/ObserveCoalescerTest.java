package io.servegate.gateway.selection;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.selection.WeightedStep;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

class ObserveCoalescerTest {

    private static final Duration BLOCK = Duration.ofSeconds(30);

    private final ObserveCoalescer<String> coalescer = new ObserveCoalescer<>(64);
    private final List<List<Double>> batches = new CopyOnWriteArrayList<>();

    private static WeightedStep step(double id) {
        return new WeightedStep(Map.of("m", id));
    }

    private static double id(WeightedStep step) {
        return step.decrements().get("m");
    }

    /** The "state" after a step: the step's id, so each caller can tell which it got. */
    private static byte[] state(double id) {
        return ByteBuffer.allocate(8).putDouble(id).array();
    }

    private static double id(byte[] state) {
        return ByteBuffer.wrap(state).getDouble();
    }

    private Flux<byte[]> record(List<WeightedStep> steps) {
        batches.add(steps.stream().map(ObserveCoalescerTest::id).toList());
        return Flux.fromIterable(steps).map(s -> state(id(s)));
    }

    @Test
    void aLoneObservationIsWrittenAtOnce() {
        byte[] state = coalescer.observe("k", step(1), this::record).block(BLOCK);

        assertThat(id(state)).isEqualTo(1);
        assertThat(batches).containsExactly(List.of(1.0));
    }

    @Test
    void observationsArrivingDuringAWriteGoTogetherInArrivalOrderAndEachGetsItsOwnState() {
        Sinks.One<byte[]> first = Sinks.one();
        AtomicInteger writes = new AtomicInteger();
        Function<List<WeightedStep>, Flux<byte[]>> write = steps -> writes.incrementAndGet() == 1
                ? record(steps).take(0).concatWith(first.asMono())
                : record(steps);
        List<Double> answers = new CopyOnWriteArrayList<>();
        for (int i = 0; i <= 4; i++) {
            coalescer.observe("k", step(i), write).subscribe(s -> answers.add(id(s)));
        }
        // another key is not held up by this one
        assertThat(id(coalescer.observe("other", step(9), this::record).block(BLOCK))).isEqualTo(9);
        assertThat(answers).isEmpty();

        first.tryEmitValue(state(0));

        assertThat(answers).containsExactly(0.0, 1.0, 2.0, 3.0, 4.0);
        assertThat(batches).containsExactly(List.of(0.0), List.of(9.0), List.of(1.0, 2.0, 3.0, 4.0));
    }

    @Test
    void aBatchTakesAtMostTheLimitAndTheRestGoInTheNextWrite() {
        ObserveCoalescer<String> small = new ObserveCoalescer<>(2);
        Sinks.One<byte[]> first = Sinks.one();
        AtomicInteger writes = new AtomicInteger();
        Function<List<WeightedStep>, Flux<byte[]>> write = steps -> writes.incrementAndGet() == 1
                ? record(steps).take(0).concatWith(first.asMono())
                : record(steps);
        List<Double> answers = new CopyOnWriteArrayList<>();
        for (int i = 0; i <= 5; i++) {
            small.observe("k", step(i), write).subscribe(s -> answers.add(id(s)));
        }
        first.tryEmitValue(state(0));

        assertThat(answers).containsExactly(0.0, 1.0, 2.0, 3.0, 4.0, 5.0);
        assertThat(batches).containsExactly(List.of(0.0), List.of(1.0, 2.0), List.of(3.0, 4.0), List.of(5.0));
    }

    /** A write that fails after storing some steps (the optimistic path goes one step at a time). */
    @Test
    void anErrorFailsOnlyTheStepsWhoseStateWasNotWrittenAndTheNextBatchStillGoes() {
        Sinks.One<byte[]> first = Sinks.one();
        AtomicInteger writes = new AtomicInteger();
        Function<List<WeightedStep>, Flux<byte[]>> write = steps -> switch (writes.incrementAndGet()) {
            case 1 -> first.asMono().flux();
            case 2 -> Flux.concat(Flux.just(state(id(steps.get(0)))), Flux.error(new IllegalStateException("down")));
            default -> record(steps);
        };
        List<String> outcomes = new CopyOnWriteArrayList<>();
        for (int i = 0; i <= 3; i++) {
            int n = i;
            coalescer.observe("k", step(i), write)
                    .subscribe(s -> outcomes.add(n + " ok"), e -> outcomes.add(n + " " + e.getMessage()));
        }
        first.tryEmitValue(state(0));

        assertThat(outcomes).containsExactly("0 ok", "1 ok", "2 down", "3 down");
        assertThat(id(coalescer.observe("k", step(4), write).block(BLOCK))).isEqualTo(4);
    }

    @Test
    void aWriteWithTooFewStatesFailsTheRestInsteadOfLeavingThemWaiting() {
        Sinks.One<byte[]> first = Sinks.one();
        AtomicInteger writes = new AtomicInteger();
        Function<List<WeightedStep>, Flux<byte[]>> write = steps -> writes.incrementAndGet() == 1
                ? first.asMono().flux()
                : Flux.empty();
        coalescer.observe("k", step(0), write).subscribe();
        List<Throwable> errors = new ArrayList<>();
        coalescer.observe("k", step(1), write).subscribe(s -> { }, errors::add);
        first.tryEmitValue(state(0));

        assertThat(errors).singleElement().satisfies(e -> assertThat(e).hasMessageContaining("0 states for 1 steps"));
    }

    /**
     * Writers on many threads, writes completing on other threads: every observation is written
     * exactly once, one write of the key at a time, and each writer's observations in the order
     * it sent them.
     */
    @Test
    void underConcurrencyNothingIsLostOrReorderedAndWritesOfAKeyNeverOverlap() {
        int writers = 8;
        int each = 500;
        AtomicLong stored = new AtomicLong();
        AtomicBoolean inFlight = new AtomicBoolean();
        ConcurrentLinkedQueue<String> overlaps = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Double> written = new ConcurrentLinkedQueue<>();
        List<List<Long>> answers = new ArrayList<>();
        List<Mono<Void>> all = new ArrayList<>();
        Function<List<WeightedStep>, Flux<byte[]>> write = steps -> {
            if (!inFlight.compareAndSet(false, true)) {
                overlaps.add("two writes at once");
            }
            batches.add(List.of((double) steps.size()));
            int[] done = {0};
            return Flux.fromIterable(steps)
                    .map(s -> {
                        written.add(id(s));
                        if (++done[0] == steps.size()) {
                            inFlight.set(false);
                        }
                        return state(stored.incrementAndGet());
                    })
                    .delaySubscription(Duration.ofNanos(200_000), Schedulers.boundedElastic());
        };
        for (int w = 0; w < writers; w++) {
            List<Long> mine = new CopyOnWriteArrayList<>();
            answers.add(mine);
            int writer = w;
            all.add(Flux.range(0, each).publishOn(Schedulers.parallel())
                    .concatMap(k -> coalescer.observe("hot", step(writer * each + k), write).map(s -> (long) id(s)))
                    .doOnNext(mine::add).then());
        }
        // the writers' own order is kept by concatMap; several writers make batches of several
        Flux.merge(all).then().block(BLOCK);

        assertThat(overlaps).isEmpty();
        assertThat(written).hasSize(writers * each).doesNotHaveDuplicates();
        List<Long> counts = answers.stream().flatMap(List::stream).sorted().toList();
        assertThat(counts).hasSize(writers * each).doesNotHaveDuplicates()
                .allMatch(c -> c >= 1 && c <= writers * each);
        for (List<Long> mine : answers) {
            assertThat(mine).isSorted();
        }
        assertThat(batches).as("writes").hasSizeLessThan(writers * each);
    }
}

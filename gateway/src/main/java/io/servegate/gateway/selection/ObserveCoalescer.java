package io.servegate.gateway.selection;

import io.servegate.core.selection.WeightedStep;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Coalesces observations of one state: while a write of a key's steps is in flight, the steps
 * that arrive for that key wait, and are then written together, in arrival order, in one call
 * (for Redis, one observe script with several steps). A lone observation is written at once, so
 * coalescing costs no latency without contention; with one application-wide state that every
 * client's feedback goes to, 16 clients need about one write per round instead of 16.
 *
 * <p>Each observation completes with the state right after its own step (as if each had been
 * written alone, in that order), or fails with its batch's error: none is acknowledged before it
 * is stored, and none is dropped.
 *
 * @param <K> what identifies a state and how it is written (store key, policy, linked models)
 */
final class ObserveCoalescer<K> {

    private final ConcurrentHashMap<K, List<Waiting>> queued = new ConcurrentHashMap<>();
    private final int maxBatch;

    /** @param maxBatch the most steps one write takes (the rest wait for the next), at least 1 */
    ObserveCoalescer(int maxBatch) {
        if (maxBatch < 1) {
            throw new IllegalArgumentException("maxBatch must be >= 1, got " + maxBatch);
        }
        this.maxBatch = maxBatch;
    }

    private record Waiting(WeightedStep step, MonoSink<byte[]> sink) {
    }

    /**
     * @param write writes a non-empty list of steps, in order, and emits the state after each
     *              step; a step's state is emitted only once it is stored, and an error fails the
     *              steps whose state was not emitted. It is called for one batch of a key at a time.
     * @return the state once {@code step} is written
     */
    Mono<byte[]> observe(K key, WeightedStep step, Function<List<WeightedStep>, Flux<byte[]>> write) {
        return Mono.create(sink -> {
            Waiting w = new Waiting(step, sink);
            boolean[] first = {false};
            // a key is in the map while a write of it is in flight; its list holds the steps waiting for the next one
            queued.compute(key, (k, waiting) -> {
                if (waiting == null) {
                    first[0] = true;
                    waiting = new ArrayList<>();
                }
                waiting.add(w);
                return waiting;
            });
            if (first[0]) {
                writeNext(key, write);
            }
        });
    }

    /** Writes the steps waiting for {@code key} (up to the batch limit), then the next; removes the key when none waits. */
    private void writeNext(K key, Function<List<WeightedStep>, Flux<byte[]>> write) {
        List<Waiting> batch = new ArrayList<>();
        queued.compute(key, (k, waiting) -> {
            List<Waiting> next = waiting.subList(0, Math.min(maxBatch, waiting.size()));
            batch.addAll(next);
            next.clear();
            return batch.isEmpty() ? null : waiting;
        });
        if (batch.isEmpty()) {
            return;
        }
        Flux<byte[]> written;
        try {
            written = write.apply(batch.stream().map(Waiting::step).toList());
        } catch (RuntimeException e) {
            written = Flux.error(e);
        }
        int[] served = {0};
        written.take(batch.size()).subscribe(
                state -> batch.get(served[0]++).sink().success(state),
                error -> {
                    for (int i = served[0]; i < batch.size(); i++) {
                        batch.get(i).sink().error(error);
                    }
                    writeNext(key, write);
                },
                () -> {
                    // a state per step, or the callers would be left waiting
                    for (int i = served[0]; i < batch.size(); i++) {
                        batch.get(i).sink().error(new IllegalStateException(
                                "the observe write gave " + served[0] + " states for " + batch.size() + " steps"));
                    }
                    writeNext(key, write);
                });
    }
}

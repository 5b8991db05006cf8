package io.servegate.gateway.selection;

import io.servegate.core.selection.Versioned;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/** The retry loop behind {@link SelectionStateStore#update}. */
final class OptimisticUpdate {

    static final int DEFAULT_MAX_ATTEMPTS = 100;
    static final Duration DEFAULT_BASE_BACKOFF = Duration.ofNanos(500_000);
    static final Duration DEFAULT_MAX_BACKOFF = Duration.ofMillis(20);

    private OptimisticUpdate() {
    }

    static Mono<byte[]> run(SelectionStateStore store, String app, String context, Function<byte[], byte[]> fn,
                            int maxAttempts, Duration baseBackoff, Duration maxBackoff) {
        if (fn == null) {
            throw new IllegalArgumentException("fn must not be null");
        }
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1, got " + maxAttempts);
        }
        return Mono.defer(() -> attempt(store, app, context, fn, 1, maxAttempts,
                baseBackoff.toNanos(), maxBackoff.toNanos()));
    }

    private static Mono<byte[]> attempt(SelectionStateStore store, String app, String context,
                                        Function<byte[], byte[]> fn, int attempt, int maxAttempts,
                                        long baseNanos, long maxNanos) {
        return store.get(app, context)
                .map(Optional::of)
                .defaultIfEmpty(Optional.empty())
                .flatMap(current -> {
                    byte[] old = current.map(Versioned::state).orElse(null);
                    long version = current.map(Versioned::version).orElse(0L);
                    byte[] next = fn.apply(old);
                    if (next == null) {
                        return Mono.justOrEmpty(old);
                    }
                    return store.compareAndSet(app, context, version, next).flatMap(written -> {
                        if (written) {
                            return Mono.just(next);
                        }
                        if (attempt >= maxAttempts) {
                            return Mono.error(new SelectionStateConflictException("selection state of app '" + app
                                    + "' context " + describe(context) + " is still contended after "
                                    + maxAttempts + " attempts; update not applied"));
                        }
                        // "Full jitter": a random delay up to an exponentially growing cap spreads
                        // racing writers apart instead of letting them collide again in lock step.
                        long cap = Math.min(maxNanos, baseNanos << Math.min(attempt - 1, 30));
                        long delay = cap <= 0 ? 0 : ThreadLocalRandom.current().nextLong(cap + 1);
                        return Mono.delay(Duration.ofNanos(delay)).then(Mono.defer(() ->
                                attempt(store, app, context, fn, attempt + 1, maxAttempts, baseNanos, maxNanos)));
                    });
                });
    }

    private static String describe(String context) {
        return context == null || context.isEmpty() ? "(app-wide)" : "'" + context + "'";
    }
}

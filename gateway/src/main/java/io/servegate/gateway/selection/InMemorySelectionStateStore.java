package io.servegate.gateway.selection;

import io.servegate.core.selection.Versioned;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * A {@link SelectionStateStore} in this gateway's memory, for a single instance or for tests.
 *
 * <p>Bounded: at most {@code maximumSize} contexts are kept (least-recently/frequently used
 * ones are evicted, Caffeine's W-TinyLFU), and optionally each expires {@code ttl} after its last
 * write. An evicted or expired state reads as absent, so its policy starts over from
 * {@link SelectionPolicy#init}. Compare-and-set is atomic ({@code asMap().compute}); every
 * operation completes synchronously on the subscribing thread.
 */
public final class InMemorySelectionStateStore implements SelectionStateStore {

    /** The default bound on the number of stored contexts. */
    public static final long DEFAULT_MAXIMUM_SIZE = 100_000;

    private final Cache<String, Versioned> cache;

    /** At most {@value #DEFAULT_MAXIMUM_SIZE} contexts, no expiry. */
    public InMemorySelectionStateStore() {
        this(DEFAULT_MAXIMUM_SIZE, null);
    }

    /**
     * @param maximumSize how many contexts to keep at most, {@code >= 1}
     * @param ttl         how long a state lives after its last write; {@code null} = forever
     * @throws IllegalArgumentException if {@code maximumSize < 1} or {@code ttl} is not positive
     */
    public InMemorySelectionStateStore(long maximumSize, Duration ttl) {
        this(maximumSize, ttl, Ticker.systemTicker());
    }

    /** With a test clock. */
    InMemorySelectionStateStore(long maximumSize, Duration ttl, Ticker ticker) {
        if (maximumSize < 1) {
            throw new IllegalArgumentException("maximumSize must be >= 1, got " + maximumSize);
        }
        if (ttl != null && (ttl.isNegative() || ttl.isZero())) {
            throw new IllegalArgumentException("ttl must be > 0 or null (no expiry), got " + ttl);
        }
        Caffeine<Object, Object> builder = Caffeine.newBuilder().maximumSize(maximumSize).ticker(ticker);
        if (ttl != null) {
            builder.expireAfterWrite(ttl);
        }
        this.cache = builder.build();
    }

    @Override
    public Mono<Versioned> get(String app, String context) {
        String key = StateKeys.key(app, context);
        return Mono.fromSupplier(() -> cache.getIfPresent(key));
    }

    @Override
    public Mono<Boolean> compareAndSet(String app, String context, long expectedVersion, byte[] state) {
        String key = StateKeys.key(app, context);
        if (expectedVersion < 0) {
            throw new IllegalArgumentException("expectedVersion must be >= 0 (0 = absent), got " + expectedVersion);
        }
        if (state == null) {
            throw new IllegalArgumentException("state must not be null");
        }
        return Mono.fromSupplier(() -> {
            // Cheap rejection without taking the entry's lock (and without counting as a write).
            Versioned seen = cache.getIfPresent(key);
            if ((seen == null ? 0 : seen.version()) != expectedVersion) {
                return false;
            }
            boolean[] written = {false};
            cache.asMap().compute(key, (k, current) -> {
                long version = current == null ? 0 : current.version();
                if (version != expectedVersion) {
                    return current;
                }
                written[0] = true;
                return new Versioned(state, expectedVersion == 0 ? StateKeys.initialVersion() : expectedVersion + 1);
            });
            return written[0];
        });
    }

    /** Approximate number of stored contexts (after pending evictions are applied). */
    public long size() {
        cache.cleanUp();
        return cache.estimatedSize();
    }

    @Override
    public String toString() {
        return "InMemorySelectionStateStore[size=" + cache.estimatedSize() + "]";
    }
}

package io.servegate.gateway.selection;

import io.servegate.core.selection.Versioned;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Ticker;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import reactor.core.publisher.Mono;

/**
 * A {@link SelectionStateStore} in this gateway's memory, for a single instance or for tests.
 *
 * <p>Bounded per application ({@link StateBounds}): each keeps at most
 * {@code maxStatesPerApp} per-context states (Caffeine's W-TinyLFU evicts beyond it, which
 * favours contexts that get feedback often, so a flood of one-off contexts mostly evicts
 * itself), and each state expires {@code ttl} after its last write. The application-wide state
 * is kept apart and only expires. An evicted or expired state reads as absent, so its policy
 * starts over from {@code init}. Compare-and-set is atomic ({@code asMap().compute}); every
 * operation completes synchronously on the subscribing thread.
 */
public final class InMemorySelectionStateStore implements SelectionStateStore {

    private final StateBounds bounds;
    private final Ticker ticker;
    private final Cache<String, Versioned> appWide;
    /** Per application: its contexts' states. Applications are the registry's, so few. */
    private final Map<String, Cache<String, Versioned>> contexts = new ConcurrentHashMap<>();
    private final LongAdder evictions = new LongAdder();

    /** With {@link StateBounds#DEFAULT}. */
    public InMemorySelectionStateStore() {
        this(StateBounds.DEFAULT);
    }

    public InMemorySelectionStateStore(StateBounds bounds) {
        this(bounds, Ticker.systemTicker());
    }

    /** With a test clock. */
    InMemorySelectionStateStore(StateBounds bounds, Ticker ticker) {
        this.bounds = bounds;
        this.ticker = ticker;
        this.appWide = expiring(Caffeine.newBuilder()).build();
    }

    private Caffeine<Object, Object> expiring(Caffeine<Object, Object> builder) {
        builder.ticker(ticker);
        return bounds.ttl() == null ? builder : builder.expireAfterWrite(bounds.ttl());
    }

    private Cache<String, Versioned> cache(String app, String context) {
        if (app == null || app.isBlank()) {
            throw new IllegalArgumentException("app must not be null or blank");
        }
        if (context == null || context.isEmpty()) {
            return appWide;
        }
        return contexts.computeIfAbsent(app, a -> expiring(Caffeine.newBuilder())
                .maximumSize(bounds.maxStatesPerApp())
                .executor(Runnable::run) // evict on the writing thread: the bound holds when the write returns
                .removalListener((String c, Versioned v, RemovalCause cause) -> {
                    if (cause == RemovalCause.SIZE) {
                        evictions.increment();
                    }
                })
                .build());
    }

    private static String key(String app, String context) {
        return context == null || context.isEmpty() ? app : context;
    }

    @Override
    public Mono<Versioned> get(String app, String context) {
        Cache<String, Versioned> cache = cache(app, context);
        String key = key(app, context);
        return Mono.fromSupplier(() -> cache.getIfPresent(key));
    }

    @Override
    public Mono<Boolean> compareAndSet(String app, String context, long expectedVersion, byte[] state) {
        Cache<String, Versioned> cache = cache(app, context);
        String key = key(app, context);
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

    @Override
    public long evictions() {
        return evictions.sum();
    }

    /** Number of stored per-context states of {@code app} (after pending evictions are applied). */
    public long size(String app) {
        Cache<String, Versioned> cache = contexts.get(app);
        if (cache == null) {
            return 0;
        }
        cache.cleanUp();
        return cache.estimatedSize();
    }

    /** Number of stored states, application-wide ones included (after pending evictions are applied). */
    public long size() {
        appWide.cleanUp();
        return appWide.estimatedSize() + contexts.keySet().stream().mapToLong(this::size).sum();
    }

    @Override
    public String toString() {
        return "InMemorySelectionStateStore[size=" + size() + "]";
    }
}

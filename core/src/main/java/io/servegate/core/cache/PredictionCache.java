package io.servegate.core.cache;

import com.github.benmanes.caffeine.cache.AsyncCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Clipper's prediction cache (§4.2): a byte-bounded Caffeine cache from (model, version, input)
 * to output. Concurrent identical queries share one in-flight computation, because the async
 * cache stores the future itself; a computation that fails is evicted, so it is retried by the
 * next query instead of being remembered.
 */
public final class PredictionCache {

    private final AsyncCache<CacheKey, String> cache;
    private final boolean enabled;
    private final Counter hits;
    private final Counter misses;

    public PredictionCache(boolean enabled, long maxBytes, MeterRegistry meters) {
        this.enabled = enabled;
        this.cache = Caffeine.newBuilder()
                .maximumWeight(maxBytes)
                .<CacheKey, String>weigher((key, output) -> key.weight(output))
                .buildAsync();
        this.hits = Counter.builder("servegate.cache.requests").tag("result", "hit")
                .description("Prediction cache lookups").register(meters);
        this.misses = Counter.builder("servegate.cache.requests").tag("result", "miss")
                .description("Prediction cache lookups").register(meters);
    }

    /**
     * The output for {@code key}: cached, in flight for another query, or computed now by
     * {@code compute}. The returned future may be shared, so callers must not cancel it.
     */
    public CompletableFuture<String> get(CacheKey key, Function<CacheKey, CompletableFuture<String>> compute) {
        if (!enabled) {
            misses.increment();
            return compute.apply(key);
        }
        boolean[] computed = {false};
        CompletableFuture<String> result = cache.get(key, (k, executor) -> {
            computed[0] = true;
            return compute.apply(k);
        });
        (computed[0] ? misses : hits).increment();
        return result;
    }

    /** The output if it is cached and complete; null otherwise. Never computes anything. */
    public String getIfPresent(CacheKey key) {
        CompletableFuture<String> f = cache.getIfPresent(key);
        return f != null && f.isDone() && !f.isCompletedExceptionally() ? f.join() : null;
    }

    /** Drops every entry of one model version, e.g. when it is deleted. */
    public void invalidateModel(String model, String version) {
        cache.synchronous().asMap().keySet()
                .removeIf(k -> k.model().equals(model) && k.version().equals(version));
    }
}

package io.servegate.gateway.access;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.servegate.core.quota.TokenBucket;
import io.servegate.gateway.registry.RateLimit;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * This gateway's token buckets: one per app with a {@code rate_limit}, one per query key with
 * one. Buckets exist per app and per key only (never per client), and at most {@code maxBuckets}
 * at once; one unused for an hour is dropped (and starts full again). Each gateway of a fleet
 * keeps its own buckets.
 */
public final class QueryQuotas {

    private record Held(RateLimit limit, TokenBucket bucket) {
    }

    private final Cache<String, Held> buckets;
    private final LongSupplier clock;

    /** @param clock nanoseconds, monotonic */
    public QueryQuotas(LongSupplier clock, long maxBuckets) {
        this.clock = clock;
        this.buckets = Caffeine.newBuilder().maximumSize(maxBuckets).expireAfterAccess(Duration.ofHours(1)).build();
    }

    /**
     * Takes a token from the app's bucket and the key's (either may be absent: null limit).
     *
     * @return 0 if admitted, else nanoseconds until a retry could be admitted
     */
    public long tryTake(String app, RateLimit appLimit, String keyId, RateLimit keyLimit) {
        long now = clock.getAsLong();
        TokenBucket appBucket = appLimit == null ? null : bucket(app, appLimit, now);
        long wait = appBucket == null ? 0 : appBucket.tryTake(now);
        if (wait > 0 || keyLimit == null || keyId == null) {
            return wait;
        }
        wait = bucket(app + "\u0000" + keyId, keyLimit, now).tryTake(now);
        if (wait > 0 && appBucket != null) {
            appBucket.giveBack(); // refused by its key: the app's token stays for its other keys
        }
        return wait;
    }

    private TokenBucket bucket(String name, RateLimit limit, long now) {
        Held held = buckets.asMap().compute(name, (n, h) -> h != null && h.limit().equals(limit) ? h
                : new Held(limit, new TokenBucket(limit.perSecond(), limit.burst(), now)));
        return held.bucket();
    }
}

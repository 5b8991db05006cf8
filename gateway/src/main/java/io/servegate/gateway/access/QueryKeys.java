package io.servegate.gateway.access;

import com.github.benmanes.caffeine.cache.AsyncLoadingCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.servegate.gateway.registry.RateLimit;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;
import reactor.core.publisher.Mono;

/**
 * Creates, lists, revokes and checks apps' query keys. A key is {@code sgk_<id>_<secret>}: the
 * id (8 random bytes, hex) is public, the secret 32 random bytes (base64url); the store keeps
 * the SHA-256 of the whole key, compared in constant time. An app's keys are read again once
 * {@code cacheTtl} has passed (the first query after it still uses the last list while the read
 * runs), so a key revoked on another gateway of the fleet stops working within about that time
 * (on this gateway at once); while the store cannot be reached the last list read stays in force.
 * At most {@code maxApps} apps' key lists are cached.
 */
public final class QueryKeys {

    /** The most keys one app may hold (two suffice for rotation; a few more for several clients). */
    public static final int MAX_KEYS_PER_APP = 16;
    private static final Pattern KEY = Pattern.compile("sgk_([0-9a-f]{16})_[A-Za-z0-9_-]{43}");

    private final QueryKeyStore store;
    private final SecureRandom random = new SecureRandom();
    private final AsyncLoadingCache<String, List<QueryKey>> cache;

    /**
     * @param cacheTtl how long an app's key list is reused; the bound on revocation across a fleet
     * @param maxApps  how many apps' key lists are cached at once
     */
    public QueryKeys(QueryKeyStore store, Duration cacheTtl, long maxApps) {
        this.store = store;
        // refreshed, not expired: while the store cannot be reached (Redis restarting) the last list
        // read stays in force, so queries neither fail nor pass a keyed app unchecked
        this.cache = Caffeine.newBuilder().refreshAfterWrite(cacheTtl).maximumSize(maxApps)
                .buildAsync((app, executor) -> store.keys(app).toFuture());
    }

    /** A key just created: {@code key} is shown once and never stored. */
    public record Created(String id, String key) {
    }

    /** What a presented key is for an app: no keys needed, a valid key, or refused. */
    public record Check(boolean allowed, QueryKey key, String problem) {
        static final Check OPEN = new Check(true, null, null);
    }

    /**
     * Creates a key for {@code app}; fails with {@link IllegalStateException} when the app holds
     * {@link #MAX_KEYS_PER_APP} keys already.
     */
    public Mono<Created> create(String app, RateLimit rateLimit) {
        return store.keys(app).flatMap(existing -> {
            if (existing.size() >= MAX_KEYS_PER_APP) {
                return Mono.error(new IllegalStateException("app '" + app + "' holds " + existing.size()
                        + " keys, the limit; revoke one first"));
            }
            byte[] idBytes = new byte[8];
            byte[] secret = new byte[32];
            random.nextBytes(idBytes);
            random.nextBytes(secret);
            String id = HexFormat.of().formatHex(idBytes);
            String key = "sgk_" + id + "_" + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
            QueryKey stored = new QueryKey(id, HexFormat.of().formatHex(sha256(key)), rateLimit,
                    System.currentTimeMillis());
            return store.add(app, stored).then(Mono.fromRunnable(() -> cache.synchronous().invalidate(app)))
                    .thenReturn(new Created(id, key));
        });
    }

    /** An app's keys as stored (ids, quotas and creation times; digests are not for showing). */
    public Mono<List<QueryKey>> list(String app) {
        return store.keys(app);
    }

    /** Revokes a key; {@code false} if there was none of that id. Takes effect here at once. */
    public Mono<Boolean> revoke(String app, String id) {
        return store.revoke(app, id).doOnSuccess(x -> cache.synchronous().invalidate(app));
    }

    /** Forgets every key of a deleted app. */
    public Mono<Void> removeAll(String app) {
        return store.removeAll(app).doOnSuccess(x -> cache.synchronous().invalidate(app));
    }

    /**
     * Checks an {@code Authorization} value against an app's keys (cached); an app without keys
     * lets every query pass.
     */
    public Mono<Check> check(String app, String authorization) {
        return Mono.fromFuture(cache.get(app), true).map(keys -> check(keys, authorization));
    }

    /**
     * {@link #check(String, String)} at once when the app's key list has been read (for every
     * query but its app's first few), so that the query path subscribes to nothing for it; null
     * while the list is being read or its read failed, for the caller to wait with {@code check}.
     */
    public Check checkIfRead(String app, String authorization) {
        CompletableFuture<List<QueryKey>> keys = cache.get(app);
        return keys.isDone() && !keys.isCompletedExceptionally() ? check(keys.join(), authorization) : null;
    }

    static Check check(List<QueryKey> keys, String authorization) {
        if (keys.isEmpty()) {
            return Check.OPEN;
        }
        if (authorization == null) {
            return new Check(false, null, "missing");
        }
        if (authorization.length() < 7 || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return new Check(false, null, "malformed");
        }
        String presented = authorization.substring(7).strip();
        var m = KEY.matcher(presented);
        if (!m.matches()) {
            return new Check(false, null, "invalid");
        }
        byte[] digest = sha256(presented);
        for (QueryKey k : keys) {
            if (k.id().equals(m.group(1))
                    && MessageDigest.isEqual(digest, HexFormat.of().parseHex(k.digest()))) {
                return new Check(true, k, null);
            }
        }
        return new Check(false, null, "invalid");
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

package io.servegate.gateway.access;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.reactive.RedisReactiveCommands;
import io.lettuce.core.codec.StringCodec;
import io.servegate.gateway.registry.RateLimit;
import java.time.Duration;
import java.util.List;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Query keys in Redis, shared by every gateway of a fleet: one HASH per app,
 * {@code <prefix>:query-keys:<app>}, key id → JSON {@code {"v":1, "digest", "createdMillis",
 * "rateLimit"?}}. Only digests are stored. Reactive (Lettuce) throughout.
 */
public final class RedisQueryKeyStore implements QueryKeyStore {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisReactiveCommands<String, String> redis;
    private final String prefix;
    private final Duration timeout;

    private RedisQueryKeyStore(RedisClient client, String keyPrefix, Duration timeout) {
        this.client = client;
        this.connection = client.connect(StringCodec.UTF8);
        this.redis = connection.reactive();
        this.prefix = keyPrefix + ":query-keys:";
        this.timeout = timeout;
    }

    /** Connects (blocking, at startup); the store shuts {@code client} down when closed. */
    public static RedisQueryKeyStore connect(RedisClient client, String keyPrefix, Duration timeout) {
        try {
            return new RedisQueryKeyStore(client, keyPrefix, timeout);
        } catch (RuntimeException e) {
            client.shutdown();
            throw e;
        }
    }

    /** The Redis key of an app's HASH. */
    String hashKey(String app) {
        return prefix + app;
    }

    @Override
    public Mono<Void> add(String app, QueryKey key) {
        return redis.hset(hashKey(app), key.id(), json(key)).timeout(timeout).then();
    }

    @Override
    public Mono<Boolean> revoke(String app, String id) {
        return redis.hdel(hashKey(app), id).timeout(timeout).map(n -> n > 0);
    }

    @Override
    public Mono<List<QueryKey>> keys(String app) {
        return redis.hgetall(hashKey(app)).map(kv -> read(kv.getKey(), kv.getValue())).collectList().timeout(timeout);
    }

    @Override
    public Mono<Void> removeAll(String app) {
        return redis.del(hashKey(app)).timeout(timeout).then();
    }

    private static String json(QueryKey key) {
        ObjectNode n = JSON.createObjectNode();
        n.put("v", 1);
        n.put("digest", key.digest());
        n.put("createdMillis", key.createdMillis());
        if (key.rateLimit() != null) {
            n.putObject("rateLimit").put("perSecond", key.rateLimit().perSecond())
                    .put("burst", key.rateLimit().burst());
        }
        return JSON.writeValueAsString(n);
    }

    private static QueryKey read(String id, String json) {
        JsonNode n = JSON.readTree(json);
        JsonNode r = n.path("rateLimit");
        return new QueryKey(id, n.path("digest").asString(),
                r.isObject() ? new RateLimit(r.path("perSecond").asDouble(), r.path("burst").asInt()) : null,
                n.path("createdMillis").asLong());
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }
}

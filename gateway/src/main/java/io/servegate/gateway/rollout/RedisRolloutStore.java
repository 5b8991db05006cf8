package io.servegate.gateway.rollout;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.reactive.RedisReactiveCommands;
import io.lettuce.core.codec.StringCodec;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutEvidence;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Rollouts in Redis, shared by every gateway of a fleet and kept across restarts:
 * <ul>
 *   <li>{@code <prefix>:rollouts} — HASH model name → rollout JSON ({@link RolloutJson})</li>
 *   <li>{@code <prefix>:rollout-evidence:<rollout id>} — HASH gateway member → that gateway's
 *       evidence JSON, summed by whoever decides</li>
 * </ul>
 * A replacement is one Lua script that compares the stored JSON with the expected rollout's, so
 * that concurrent writers (an operator's call, the deciding gateway) get exactly one success.
 */
public final class RedisRolloutStore implements RolloutStore {

    private static final Logger log = LoggerFactory.getLogger(RedisRolloutStore.class);

    /** KEYS: rollouts hash, old evidence hash (or ""); ARGV: model, expected JSON ("" = none), next JSON. */
    private static final String REPLACE = """
            local stored = redis.call('HGET', KEYS[1], ARGV[1])
            if not stored then stored = '' end
            if stored ~= ARGV[2] then return 0 end
            redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
            if KEYS[2] ~= '' then redis.call('DEL', KEYS[2]) end
            return 1
            """;

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisReactiveCommands<String, String> redis;
    private final String rolloutsKey;
    private final String evidencePrefix;
    private final Duration timeout;

    private RedisRolloutStore(RedisClient client, String keyPrefix, Duration timeout) {
        this.client = client;
        this.connection = client.connect(StringCodec.UTF8);
        this.redis = connection.reactive();
        this.rolloutsKey = keyPrefix + ":rollouts";
        this.evidencePrefix = keyPrefix + ":rollout-evidence:";
        this.timeout = timeout;
    }

    /** Connects (blocking, at startup); the store shuts {@code client} down when closed. */
    public static RedisRolloutStore connect(RedisClient client, String keyPrefix, Duration timeout) {
        try {
            return new RedisRolloutStore(client, keyPrefix, timeout);
        } catch (RuntimeException e) {
            client.shutdown();
            throw e;
        }
    }

    @Override
    public Mono<List<Rollout>> all() {
        return redis.hgetall(rolloutsKey).flatMap(kv -> read(kv.getKey(), kv.getValue())).collectList()
                .timeout(timeout);
    }

    @Override
    public Mono<Rollout> get(String model) {
        return redis.hget(rolloutsKey, model).flatMap(json -> read(model, json)).timeout(timeout);
    }

    @Override
    public Mono<Boolean> replace(String model, Rollout expected, Rollout next) {
        String oldEvidence = expected != null && !expected.id().equals(next.id()) ? evidencePrefix + expected.id() : "";
        return redis.<Long>eval(REPLACE, ScriptOutputType.INTEGER, new String[] {rolloutsKey, oldEvidence}, model,
                expected == null ? "" : RolloutJson.write(expected), RolloutJson.write(next))
                .next().map(n -> n == 1L).timeout(timeout);
    }

    @Override
    public Mono<Void> putEvidence(String rolloutId, String member, RolloutEvidence evidence) {
        return redis.hset(evidencePrefix + rolloutId, member, RolloutJson.writeEvidence(evidence)).timeout(timeout)
                .then();
    }

    @Override
    public Mono<RolloutEvidence> evidence(String rolloutId) {
        return redis.hvals(evidencePrefix + rolloutId).map(RolloutJson::readEvidence)
                .reduce(RolloutEvidence.EMPTY, RolloutEvidence::plus).timeout(timeout);
    }

    /** A rollout that cannot be read is skipped with a warning naming it, so one bad entry never hides the rest. */
    private static Mono<Rollout> read(String model, String json) {
        try {
            return Mono.just(RolloutJson.read(json));
        } catch (RuntimeException e) {
            log.warn("skipping unreadable rollout of model {}: {}", model, e.toString());
            return Mono.empty();
        }
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }
}

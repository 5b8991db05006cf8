package io.servegate.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.gateway.testsupport.RedisServer;
import io.servegate.gateway.registry.Application;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * {@link QueryKeysContract} with the Redis registry; Redis itself holds no key (every value of
 * every key in the database is searched), and a key revoked in Redis by another gateway of the
 * fleet stops working here within the cache TTL.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0", "servegate.registry.store=redis", "servegate.registry.query-key-cache-ttl=300ms",
    "servegate.fleet.secret=test-secret-of-enough-length"})
class QueryKeysRedisTest extends QueryKeysContract {

    private static final int GRPC_PORT = FreePort.pick();
    private static final RedisServer REDIS = RedisServer.start();

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry properties) {
        properties.add("servegate.oip.grpc-port", () -> GRPC_PORT);
        properties.add("servegate.registry.redis-uri", REDIS::uri);
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    @Override
    int grpcPort() {
        return GRPC_PORT;
    }

    @Override
    void assertStoreHoldsNo(String key) {
        String secret = secretOf(key);
        RedisClient client = RedisClient.create(REDIS.uri());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            var redis = c.sync();
            assertThat(redis.keys("*")).anyMatch(k -> k.contains(":query-keys:keyed"));
            for (String k : redis.keys("*")) {
                String dump = switch (redis.type(k)) {
                    case "hash" -> redis.hgetall(k).toString();
                    case "string" -> redis.get(k);
                    default -> "";
                };
                assertThat(dump).as(k).doesNotContain(secret);
            }
        } finally {
            client.shutdown();
        }
    }

    @Test
    void aKeyRevokedElsewhereInTheFleetStopsWorkingWithinTheCacheTtl() throws Exception {
        registry.addApp(new Application("fleet", "floats", "-1", 20_000, List.of("om"))).block();
        JsonNode revoked = admin("create_query_key", Map.of("app", "fleet"));
        JsonNode kept = admin("create_query_key", Map.of("app", "fleet"));
        String key = "Bearer " + revoked.path("key").asString();
        assertThat(post(queryPort, "/fleet/predict", "{\"input\":[1,2]}", key).statusCode()).isEqualTo(200);
        RedisClient client = RedisClient.create(REDIS.uri());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            // as another gateway's revoke_query_key does
            assertThat(c.sync().hdel("servegate:query-keys:fleet", revoked.path("key_id").asString())).isEqualTo(1);
        } finally {
            client.shutdown();
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (post(queryPort, "/fleet/predict", "{\"input\":[1,2]}", key).statusCode() != 401) {
            assertThat(System.nanoTime()).as("revocation not seen within 5 s").isLessThan(deadline);
            Thread.sleep(50);
        }
        assertThat(post(queryPort, "/fleet/predict", "{\"input\":[1,2]}", "Bearer " + kept.path("key").asString())
                .statusCode()).isEqualTo(200);
    }
}

package io.servegate.gateway.registry;

import io.lettuce.core.RedisClient;
import io.servegate.gateway.testsupport.RedisServer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The registry contract against {@link RedisRegistry} on a real {@code redis-server}; every test
 * gets its own key prefix, so the tests share one server without seeing each other.
 */
class RedisRegistryContractTest extends RegistryContractTest {

    private static final AtomicInteger PREFIXES = new AtomicInteger();
    private static RedisServer server;
    private static RedisClient client;

    @BeforeAll
    static void startRedis() {
        server = RedisServer.start();
        client = RedisRegistry.newClient(server.uri());
    }

    @AfterAll
    static void stopRedis() {
        if (client != null) {
            client.shutdown();
        }
        if (server != null) {
            server.close();
        }
    }

    @Override
    protected Registry newRegistry() {
        return new RedisRegistry(client, "contract" + PREFIXES.incrementAndGet(), Duration.ofMillis(100));
    }
}

package io.servegate.gateway.testsupport;

import io.lettuce.core.RedisClient;
import io.servegate.gateway.config.RedisClients;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real {@code redis-server} and a client with the registry's options for one test class, started
 * before the class's own {@code @BeforeAll} methods and shut down after its tests; each test takes
 * a key prefix of its own. Register it as {@code @RegisterExtension static final RegistryRedisExtension
 * REDIS = new RegistryRedisExtension();}.
 */
public final class RegistryRedisExtension implements BeforeAllCallback, AfterAllCallback {

    private final AtomicInteger prefixes = new AtomicInteger();
    private RedisServer server;
    private RedisClient client;

    @Override
    public void beforeAll(ExtensionContext context) {
        server = RedisServer.start();
        client = RedisClients.create(server.uri());
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (client != null) {
            client.shutdown();
        }
        if (server != null) {
            server.close();
        }
    }

    /** The server's address, {@code redis://host:port}. */
    public String uri() {
        return server.uri();
    }

    /** The client (RedisClients.create's options) of this class's server. */
    public RedisClient client() {
        return client;
    }

    /** {@code stem} followed by a number no earlier call of this class gave. */
    public String newPrefix(String stem) {
        return stem + prefixes.incrementAndGet();
    }
}

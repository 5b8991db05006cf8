package io.servegate.gateway.registry;

import io.servegate.gateway.testsupport.RegistryRedisExtension;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The registry contract against {@link RedisRegistry} on a real {@code redis-server}; every test
 * gets its own key prefix, so the tests share one server without seeing each other.
 */
class RedisRegistryContractTest extends RegistryContractTest {

    @RegisterExtension
    static final RegistryRedisExtension REDIS = new RegistryRedisExtension();

    @Override
    protected Registry newRegistry() {
        return new RedisRegistry(REDIS.client(), REDIS.newPrefix("contract"), Duration.ofMillis(100));
    }
}

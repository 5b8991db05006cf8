package io.servegate.gateway.config;

import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.access.InMemoryQueryKeyStore;
import io.servegate.gateway.access.QueryAccess;
import io.servegate.gateway.access.QueryKeyStore;
import io.servegate.gateway.access.QueryKeys;
import io.servegate.gateway.access.QueryQuotas;
import io.servegate.gateway.access.RedisQueryKeyStore;
import io.servegate.gateway.registry.RedisRegistry;
import java.util.function.LongSupplier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Query keys and quotas per app and key ({@code gateway.access}), stored beside the registry. */
@Configuration(proxyBeanMethods = false)
public class AccessConfiguration {

    /** Apps whose query keys one gateway caches at once (each list holds at most 16 digests). */
    private static final long MAX_KEYED_APPS_CACHED = 10_000;
    /** Token buckets one gateway holds at once: one per app and per key with a quota. */
    private static final long MAX_QUOTA_BUCKETS = 100_000;

    @Bean(destroyMethod = "close")
    QueryKeyStore queryKeyStore(ServegateProperties props) {
        ServegateProperties.Registry r = props.registry();
        return "redis".equals(r.store())
                ? RedisQueryKeyStore.connect(RedisClients.create(r.redisUri(), props.redis()), r.keyPrefix(),
                        RedisRegistry.DEFAULT_COMMAND_TIMEOUT)
                : new InMemoryQueryKeyStore();
    }

    @Bean
    QueryKeys queryKeys(QueryKeyStore store, ServegateProperties props) {
        return new QueryKeys(store, props.registry().queryKeyCacheTtl(), MAX_KEYED_APPS_CACHED);
    }

    @Bean
    QueryAccess queryAccess(QueryKeys keys, LongSupplier clock, MeterRegistry meters) {
        return new QueryAccess(keys, new QueryQuotas(clock, MAX_QUOTA_BUCKETS), meters);
    }
}

package io.servegate.gateway.config;

import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.api.JsonBodies;
import io.servegate.gateway.api.RolloutHandler;
import io.servegate.gateway.dispatch.ReplicaPool;
import io.servegate.gateway.fleet.Ownership;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RedisRegistry;
import io.servegate.gateway.rollout.InMemoryRolloutStore;
import io.servegate.gateway.rollout.RedisRolloutStore;
import io.servegate.gateway.rollout.RolloutAdmin;
import io.servegate.gateway.rollout.RolloutCounters;
import io.servegate.gateway.rollout.RolloutDecisions;
import io.servegate.gateway.rollout.RolloutMeters;
import io.servegate.gateway.rollout.RolloutStore;
import io.servegate.gateway.rollout.RolloutTraffic;
import io.servegate.gateway.rollout.ShadowAdmission;
import java.util.UUID;
import java.util.function.LongSupplier;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Schedulers;

/** Safe rollouts ({@code gateway.rollout}): stored beside the registry, in memory or in the same Redis. */
@Configuration(proxyBeanMethods = false)
public class RolloutConfiguration {

    @Bean(destroyMethod = "close")
    RolloutStore rolloutStore(ServegateProperties props) {
        ServegateProperties.Registry r = props.registry();
        return "redis".equals(r.store())
                ? RedisRolloutStore.connect(RedisClients.create(r.redisUri(), props.redis()), r.keyPrefix(),
                        RedisRegistry.DEFAULT_COMMAND_TIMEOUT)
                : new InMemoryRolloutStore();
    }

    @Bean
    RolloutCounters rolloutCounters() {
        return new RolloutCounters();
    }

    @Bean
    RolloutTraffic rolloutTraffic(RolloutCounters counters, LongSupplier clock, ServegateProperties props,
            ReplicaPool pool, MeterRegistry meters) {
        RolloutProperties p = props.rollouts();
        return new RolloutTraffic(counters, clock, p.playedTtl(), p.playedSize().toBytes(),
                new ShadowAdmission(pool::hasRoom, p.shadowMaxInFlight(), meters));
    }

    @Bean
    RolloutAdmin rolloutAdmin(RolloutStore store, RolloutTraffic traffic, Registry registry) {
        return new RolloutAdmin(store, traffic, registry, System::currentTimeMillis);
    }

    @Bean
    RolloutHandler rolloutHandler(RolloutAdmin admin, JsonBodies bodies) {
        return new RolloutHandler(admin, bodies);
    }

    /** Decides where this gateway owns the candidate version: always alone, its owner in a fleet. */
    @Bean(destroyMethod = "close")
    RolloutDecisions rolloutDecisions(RolloutStore store, RolloutTraffic traffic, RolloutCounters counters,
            Registry registry, ObjectProvider<Ownership> ownership, MeterRegistry meters, ServegateProperties props) {
        Ownership owner = ownership.getIfAvailable(() -> Ownership.SOLO);
        return new RolloutDecisions(store, traffic, counters, registry, owner::owns,
                owner.self() + "/" + UUID.randomUUID(), System::currentTimeMillis, new RolloutMeters(meters))
                .start(props.rollouts().interval(), Schedulers.parallel());
    }
}

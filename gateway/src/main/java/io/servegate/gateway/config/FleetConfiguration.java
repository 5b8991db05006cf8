package io.servegate.gateway.config;

import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.api.BearerAuth;
import io.servegate.gateway.api.GrpcBytesInFlight;
import io.servegate.gateway.connections.ConnectionBudget;
import io.servegate.gateway.connections.GrpcConnectionGuard;
import io.servegate.gateway.dispatch.ReplicaPool;
import io.servegate.gateway.fleet.ArrivalRates;
import io.servegate.gateway.fleet.FleetDispatcher;
import io.servegate.gateway.fleet.FleetNode;
import io.servegate.gateway.fleet.FleetSecret;
import io.servegate.gateway.fleet.ForwardClient;
import io.servegate.gateway.fleet.Ownership;
import io.servegate.gateway.fleet.PublishedProfiles;
import io.servegate.gateway.fleet.RedisFleetStore;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.tracing.QueryTracing;
import io.servegate.gateway.warmup.ReadinessGate;
import java.util.function.LongSupplier;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Gateways that share a Redis registry form a fleet ({@code servegate.fleet.*}): the forwarding
 * port, the membership, and the dispatcher that forwards queries for versions another gateway
 * owns. On the in-memory registry none of these exist and the gateway schedules everything itself.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "servegate.registry.store", havingValue = "redis")
public class FleetConfiguration {

    @Bean
    ArrivalRates arrivalRates(LongSupplier clock) {
        return new ArrivalRates(clock);
    }

    /**
     * The hop's shared secret; a gateway refuses to start without one unless told the hop's port is
     * reachable by the gateways alone ({@code servegate.fleet.require-secret=false}).
     */
    @Bean
    FleetSecret fleetSecret(ServegateProperties props) {
        ServegateProperties.Fleet f = props.fleet();
        String secret = BearerAuth.resolve(f.secret(), f.secretFile(), "servegate.fleet.secret");
        if (secret.isEmpty() && f.requireSecret()) {
            throw new IllegalStateException("servegate.fleet.secret (or secret-file) is not set: a gateway on a "
                    + "Redis registry forwards queries to the others on servegate.fleet.port, and without a secret "
                    + "anyone who reaches that port could query its models. Give every gateway of the fleet the "
                    + "same secret, or set servegate.fleet.require-secret=false where only the gateways reach it.");
        }
        return FleetSecret.of(secret);
    }

    @Bean(destroyMethod = "close")
    ForwardClient forwardClient(ServegateProperties props, FleetSecret secret) {
        return new ForwardClient((int) props.limits().maxBodySize().toBytes(), secret);
    }

    /** The fleet port's guards, those of the OIP gRPC port; closed after the node (which depends on it). */
    @Bean(destroyMethod = "close")
    GrpcConnectionGuard fleetConnections(ServegateProperties props, ConnectionBudget budget, MeterRegistry meters) {
        return GrpcConnectionGuard.of(props.connections(), budget, "fleet", meters);
    }

    /** Closed before the replica pool and the registry it uses: leaving the fleet comes first. */
    @Bean(destroyMethod = "close")
    FleetNode fleetNode(ServegateProperties props, Registry registry, ReplicaPool pool, ForwardClient client,
            FleetSecret secret, ArrivalRates arrivals, LongSupplier clock, MeterRegistry meters,
            @Qualifier("fleetConnections") GrpcConnectionGuard connections, QueryTracing tracing,
            ReadinessGate readiness, PublishedProfiles profiles) {
        ServegateProperties.Fleet f = props.fleet();
        GrpcBytesInFlight bytes = GrpcBytesInFlight.of(props, "fleet", meters);
        RedisFleetStore store = RedisFleetStore.connect(RedisClients.create(props.registry().redisUri(),
                props.redis()), props.registry().keyPrefix());
        return FleetNode.start(new FleetNode.Settings(f.address(), f.port(), f.advertiseHost(), f.name(),
                f.heartbeat(), f.lease(), f.tolerance(), f.minRate(), (int) props.limits().maxBodySize().toBytes(),
                props.limits().maxInputLength(), secret, f.drainTimeout()),
                store, registry, pool, client, arrivals, clock, meters,
                b -> bytes.apply(connections.apply(b)), tracing, readiness.whenWarm(), profiles);
    }

    /**
     * Only the owner of a version profiles its replicas; the others seed their profiles from what it
     * publishes. Made before the replica pool asks whether to measure, bound to the membership later.
     */
    @Bean
    PublishedProfiles publishedProfiles() {
        return new PublishedProfiles();
    }

    @Bean
    Ownership ownership(FleetNode node) {
        return node.member();
    }

    @Bean(destroyMethod = "close")
    FleetDispatcher fleetDispatcher(ServegateProperties props, ReplicaPool pool, Ownership ownership,
            ForwardClient client, Registry registry, ArrivalRates arrivals, LongSupplier clock, MeterRegistry meters) {
        return new FleetDispatcher(pool, ownership, client, (int) props.limits().maxBodySize().toBytes(), registry,
                arrivals, clock, meters);
    }
}

package io.servegate.gateway.config;

import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.connections.HttpConnectionGuard;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The query port's timeouts and connection cap ({@code servegate.connections.*}), on the web
 * server Spring Boot runs; the admin and gRPC ports apply theirs where they are built.
 */
@Configuration(proxyBeanMethods = false)
public class ConnectionsConfiguration {

    @Bean
    NettyServerCustomizer queryPortConnections(ServegateProperties props, MeterRegistry meters) {
        return HttpConnectionGuard.of(props.connections(), "query", meters)::apply;
    }
}

package io.servegate.gateway.config;

import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.connections.ConnectionBudget;
import io.servegate.gateway.connections.HttpConnectionGuard;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The connection budget all ports share, and the query port's timeouts, cap and client share
 * ({@code servegate.connections.*}) on the web server Spring Boot runs; the admin, gRPC and fleet
 * ports apply theirs where they are built.
 */
@Configuration(proxyBeanMethods = false)
public class ConnectionsConfiguration {

    /** The connections all ports share, from the process's descriptor limit. */
    @Bean
    ConnectionBudget connectionBudget(ServegateProperties props, MeterRegistry meters) {
        ServegateProperties.Connections c = props.connections();
        return ConnectionBudget.ofProcess(c.reservedDescriptors(), c.maxTotalConnections(), meters);
    }

    @Bean
    NettyServerCustomizer queryPortConnections(ServegateProperties props, ConnectionBudget budget,
            MeterRegistry meters) {
        return HttpConnectionGuard.of(props.connections(), budget, "query", meters)::apply;
    }
}

package io.servegate.gateway.config;

import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.api.OipGrpcServer;
import io.servegate.gateway.fleet.FleetNode;
import io.servegate.gateway.warmup.Departure;
import io.servegate.gateway.warmup.ReadinessGate;
import io.servegate.gateway.warmup.Warmup;
import java.util.function.LongSupplier;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Readiness: the warm-up that runs once every port is open ({@code servegate.warmup.*}) and the
 * order of a shutdown (not ready and out of the fleet before the ports close).
 */
@Configuration(proxyBeanMethods = false)
public class WarmupConfiguration {

    @Bean
    ReadinessGate readinessGate(ServegateProperties props) {
        return props.warmup().enabled() ? new ReadinessGate() : ReadinessGate.open();
    }

    @Bean
    Warmup warmup(ReadinessGate gate, ServegateProperties props, LongSupplier clock, MeterRegistry meters,
            ObjectProvider<FleetNode> fleet) {
        return new Warmup(gate, props, clock, meters, fleet.getIfAvailable());
    }

    /** Starts the warm-up when the application is ready: the query and gRPC ports are open then. */
    @Bean
    ApplicationListener<ApplicationReadyEvent> warmupStarter(Warmup warmup, ServegateProperties props) {
        return event -> {
            if (props.warmup().enabled()
                    && event.getApplicationContext() instanceof WebServerApplicationContext web) {
                String queryHost = reachable(event.getApplicationContext().getEnvironment().getProperty("server.address"));
                warmup.start(queryHost, web.getWebServer().getPort(), reachable(props.oip().grpcAddress()),
                        props.oip().grpcPort());
            }
        };
    }

    /** Where this gateway reaches a port of its own bound to {@code bindAddress}: loopback, unless bound to one address. */
    static String reachable(String bindAddress) {
        return bindAddress == null || bindAddress.isBlank() || bindAddress.equals("0.0.0.0") || bindAddress.equals("::")
                ? "127.0.0.1" : bindAddress;
    }

    /**
     * Depends on the OIP gRPC server, which stops in the same (last) phase: Spring stops a bean's
     * dependents before it, so the departure (and the fleet drain in it) comes before that port closes too.
     */
    @Bean
    Departure departure(ReadinessGate gate, ObjectProvider<FleetNode> fleet, OipGrpcServer oipGrpcServer) {
        return new Departure(gate, fleet.getIfAvailable());
    }
}

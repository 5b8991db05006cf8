package io.servegate.gateway.config;

import io.micrometer.core.instrument.MeterRegistry;
import io.grpc.BindableService;
import io.grpc.ServerInterceptors;
import io.servegate.gateway.api.GrpcBytesInFlight;
import io.servegate.gateway.api.GrpcRequestTracing;
import io.servegate.gateway.api.OipGrpcServer;
import io.servegate.gateway.api.OipGrpcService;
import io.servegate.gateway.api.OipGrpcAccess;
import io.servegate.gateway.access.QueryAccess;
import io.grpc.ServerInterceptors;
import io.servegate.gateway.connections.ConnectionBudget;
import io.servegate.gateway.connections.GrpcConnectionGuard;
import io.servegate.gateway.query.PredictionService;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.rollout.RolloutTraffic;
import io.servegate.gateway.tracing.QueryTracing;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.gateway.warmup.ReadinessGate;
import java.time.Duration;
import java.util.Set;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The Open Inference Protocol over gRPC on {@code servegate.oip.grpc-port}, beside the REST binding. */
@Configuration(proxyBeanMethods = false)
public class OipGrpcConfiguration {

    /** Stopping waits this long for calls in flight, as the web server's graceful shutdown phase does. */
    private static final Duration GRACE = Duration.ofSeconds(10);

    @Bean
    OipGrpcServer oipGrpcServer(Registry registry, PredictionService predictions, QueryAccess access,
            ServegateProperties props, @Qualifier("grpcConnections") GrpcConnectionGuard connections,
            MeterRegistry meters, ReadinessGate readiness, RolloutTraffic rollouts) {
        ServegateProperties.Oip oip = props.oip();
        OipGrpcService service = new OipGrpcService(registry, predictions, oip.timeout(),
                props.limits().maxBatchInputs(), props.limits().maxInputLength(), readiness, rollouts);
        GrpcBytesInFlight bytes = GrpcBytesInFlight.of(props, "grpc", meters);
        OipGrpcAccess keys = new OipGrpcAccess(registry, access);
        BindableService keyed = () -> ServerInterceptors.intercept(service, keys);
        QueryTracing tracing = predictions.tracing();
        BindableService traced = !tracing.on() ? keyed : () -> ServerInterceptors.intercept(keyed.bindService(),
                new GrpcRequestTracing(tracing, Set.of(GRPCInferenceServiceGrpc.getModelInferMethod().getFullMethodName())));
        return new OipGrpcServer(traced, oip.grpcAddress(), oip.grpcPort(),
                (int) props.limits().maxBodySize().toBytes(), GRACE, b -> bytes.apply(connections.apply(b)));
    }

    /** Closed after the server has stopped (it depends on this): the event loops it made. */
    @Bean(destroyMethod = "close")
    GrpcConnectionGuard grpcConnections(ServegateProperties props, ConnectionBudget budget, MeterRegistry meters) {
        return GrpcConnectionGuard.of(props.connections(), budget, "grpc", meters);
    }
}

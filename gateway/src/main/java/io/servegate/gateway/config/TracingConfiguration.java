package io.servegate.gateway.config;

import io.servegate.gateway.tracing.OtlpTracing;
import io.servegate.gateway.tracing.QueryTracing;
import io.servegate.gateway.tracing.TraceExemplars;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** OpenTelemetry tracing of queries ({@code servegate.tracing}), exported over OTLP; off by default. */
@Configuration(proxyBeanMethods = false)
public class TracingConfiguration {

    /** Closed after the servers that make spans have stopped (they depend on it): the last spans are sent. */
    @Bean(destroyMethod = "close")
    OtlpTracing otlpTracing(ServegateProperties props) {
        ServegateProperties.Tracing t = props.tracing();
        return t.enabled() ? OtlpTracing.start(t.protocol(), t.endpoint(), t.samplingRatio(), t.serviceName(),
                t.exportTimeout()) : OtlpTracing.off();
    }

    @Bean
    QueryTracing queryTracing(OtlpTracing export) {
        return export.tracing();
    }

    /** Trace ids as exemplars of the Prometheus histograms (Boot's Prometheus registry takes this bean). */
    @Bean
    @ConditionalOnBooleanProperty("servegate.tracing.enabled")
    TraceExemplars traceExemplars() {
        return new TraceExemplars();
    }
}

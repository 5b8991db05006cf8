package io.servegate.gateway.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.net.URI;
import java.time.Duration;

/**
 * The OpenTelemetry SDK that exports the gateway's spans over OTLP: sampled by trace id (and by
 * the client's {@code traceparent} where it sent one), batched off the request path (a bounded
 * queue: spans over it are dropped, never waited for), sent to one configured endpoint. Closing
 * it sends what is queued.
 */
public final class OtlpTracing implements AutoCloseable {

    private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");

    private final SdkTracerProvider provider;
    private final QueryTracing tracing;

    private OtlpTracing(SdkTracerProvider provider, QueryTracing tracing) {
        this.provider = provider;
        this.tracing = tracing;
    }

    /** Tracing off: nothing started. */
    public static OtlpTracing off() {
        return new OtlpTracing(null, QueryTracing.OFF);
    }

    /**
     * Starts exporting to {@code endpoint}.
     *
     * @param samplingRatio the share of traces begun here that are sampled
     */
    public static OtlpTracing start(OtlpProtocol protocol, String endpoint, double samplingRatio, String serviceName,
            Duration exportTimeout) {
        SpanExporter exporter = switch (protocol) {
            case GRPC -> OtlpGrpcSpanExporter.builder().setEndpoint(endpoint).setTimeout(exportTimeout).build();
            case HTTP_PROTOBUF -> OtlpHttpSpanExporter.builder().setEndpoint(httpTracesUrl(endpoint))
                    .setTimeout(exportTimeout).build();
        };
        SdkTracerProvider provider = SdkTracerProvider.builder()
                .setResource(Resource.getDefault().merge(Resource.builder().put(SERVICE_NAME, serviceName).build()))
                .setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(samplingRatio)))
                .addSpanProcessor(BatchSpanProcessor.builder(exporter).build())
                .build();
        return new OtlpTracing(provider, QueryTracing.of(OpenTelemetrySdk.builder().setTracerProvider(provider).build()));
    }

    /** An HTTP endpoint given as {@code http://host:4318} gets the standard path {@code /v1/traces}. */
    static String httpTracesUrl(String endpoint) {
        String path = URI.create(endpoint).getPath();
        return path == null || path.isEmpty() || path.equals("/")
                ? endpoint.replaceAll("/$", "") + "/v1/traces" : endpoint;
    }

    /** The gateway's tracer: {@link QueryTracing#OFF} when off. */
    public QueryTracing tracing() {
        return tracing;
    }

    /** Sends the spans still queued, then stops. */
    @Override
    public void close() {
        if (provider != null) {
            provider.close();
        }
    }
}

package io.servegate.gateway.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.context.Context;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The OTLP/HTTP exporter, against a real HTTP receiver on loopback; and when tracing is off. */
class OtlpTracingTest {

    @Test
    void exportsOverHttpProtobufToTheStandardTracesPath() throws Exception {
        List<String> paths = new CopyOnWriteArrayList<>();
        List<ExportTraceServiceRequest> received = new CopyOnWriteArrayList<>();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            paths.add(exchange.getRequestURI().getPath());
            received.add(ExportTraceServiceRequest.parseFrom(exchange.getRequestBody().readAllBytes()));
            byte[] body = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
            exchange.getResponseHeaders().add("Content-Type", "application/x-protobuf");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        try {
            OtlpTracing tracing = OtlpTracing.start(OtlpProtocol.HTTP_PROTOBUF,
                    "http://127.0.0.1:" + server.getAddress().getPort(), 1.0, "http-gateway", Duration.ofSeconds(5));
            RequestTrace request = tracing.tracing().startRequest("POST /{app}/predict", Context.root(),
                    Attributes.empty());
            request.end(AttributeKey.longKey("http.response.status_code"), 200, null);
            tracing.close(); // sends what is queued
        } finally {
            server.stop(0);
        }
        assertThat(paths).containsOnly("/v1/traces");
        List<String> names = received.stream().flatMap(r -> r.getResourceSpansList().stream())
                .flatMap(rs -> rs.getScopeSpansList().stream()).flatMap(ss -> ss.getSpansList().stream())
                .map(s -> s.getName()).toList();
        assertThat(names).containsExactlyInAnyOrder("POST /{app}/predict", "parse");
    }

    @Test
    void anHttpEndpointWithAPathIsUsedAsGiven() {
        assertThat(OtlpTracing.httpTracesUrl("http://collector:4318")).isEqualTo("http://collector:4318/v1/traces");
        assertThat(OtlpTracing.httpTracesUrl("http://collector:4318/")).isEqualTo("http://collector:4318/v1/traces");
        assertThat(OtlpTracing.httpTracesUrl("http://collector:4318/custom/traces"))
                .isEqualTo("http://collector:4318/custom/traces");
    }

    @Test
    void offStartsNoSpan() {
        OtlpTracing off = OtlpTracing.off();
        assertThat(off.tracing().on()).isFalse();
        assertThat(off.tracing().startQuery("m", "1")).isNull();
        assertThat(QueryTrace.current()).isNull();
        off.close();
    }
}

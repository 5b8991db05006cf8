package io.servegate.gateway.testsupport;

import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Predicate;

/**
 * A real OTLP trace receiver on loopback gRPC: the {@code opentelemetry.proto.collector.trace.v1.TraceService}
 * Export method, keeping every span it is sent with the {@code service.name} of its resource.
 */
public final class OtlpReceiver implements AutoCloseable {

    /** A received span and the service that sent it. */
    public record Received(String service, Span span) {

        public String traceId() {
            return HexFormat.of().formatHex(span.getTraceId().toByteArray());
        }

        public String spanId() {
            return HexFormat.of().formatHex(span.getSpanId().toByteArray());
        }

        public String parentId() {
            return HexFormat.of().formatHex(span.getParentSpanId().toByteArray());
        }

        public String name() {
            return span.getName();
        }

        /** The attribute's value as text, or null. */
        public String attribute(String key) {
            for (KeyValue kv : span.getAttributesList()) {
                if (kv.getKey().equals(key)) {
                    AnyValue v = kv.getValue();
                    return v.hasIntValue() ? Long.toString(v.getIntValue()) : v.hasBoolValue()
                            ? Boolean.toString(v.getBoolValue()) : v.getStringValue();
                }
            }
            return null;
        }

        /** The span ids its links point at. */
        public List<String> linkedSpanIds() {
            return span.getLinksList().stream().map(l -> HexFormat.of().formatHex(l.getSpanId().toByteArray()))
                    .toList();
        }

        public boolean failed() {
            return span.getStatus().getCode() == io.opentelemetry.proto.trace.v1.Status.StatusCode.STATUS_CODE_ERROR;
        }

        public String statusMessage() {
            return span.getStatus().getMessage();
        }
    }

    private static final MethodDescriptor<ExportTraceServiceRequest, ExportTraceServiceResponse> EXPORT =
            MethodDescriptor.<ExportTraceServiceRequest, ExportTraceServiceResponse>newBuilder()
                    .setType(MethodDescriptor.MethodType.UNARY)
                    .setFullMethodName("opentelemetry.proto.collector.trace.v1.TraceService/Export")
                    .setRequestMarshaller(ProtoUtils.marshaller(ExportTraceServiceRequest.getDefaultInstance()))
                    .setResponseMarshaller(ProtoUtils.marshaller(ExportTraceServiceResponse.getDefaultInstance()))
                    .build();

    private final List<Received> spans = new ArrayList<>();
    private final Server server;

    private OtlpReceiver() throws IOException {
        ServerServiceDefinition service = ServerServiceDefinition
                .builder("opentelemetry.proto.collector.trace.v1.TraceService")
                .addMethod(EXPORT, ServerCalls.asyncUnaryCall((request, out) -> {
                    received(request);
                    out.onNext(ExportTraceServiceResponse.getDefaultInstance());
                    out.onCompleted();
                }))
                .build();
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(service).build()
                .start();
    }

    public static OtlpReceiver start() throws IOException {
        return new OtlpReceiver();
    }

    /** Where exporters send to: {@code http://127.0.0.1:PORT}. */
    public String endpoint() {
        return "http://127.0.0.1:" + server.getPort();
    }

    private synchronized void received(ExportTraceServiceRequest request) {
        for (ResourceSpans rs : request.getResourceSpansList()) {
            String service = rs.getResource().getAttributesList().stream()
                    .filter(kv -> kv.getKey().equals("service.name")).map(kv -> kv.getValue().getStringValue())
                    .findFirst().orElse("");
            for (ScopeSpans ss : rs.getScopeSpansList()) {
                for (Span s : ss.getSpansList()) {
                    spans.add(new Received(service, s));
                }
            }
        }
        notifyAll();
    }

    /** Every span received so far. */
    public synchronized List<Received> spans() {
        return List.copyOf(spans);
    }

    /** The spans of one trace, once {@code complete} says they have all come (or the wait is over: what came). */
    public synchronized List<Received> await(String traceId, Predicate<List<Received>> complete, Duration wait)
            throws InterruptedException {
        long end = System.nanoTime() + wait.toNanos();
        while (true) {
            List<Received> trace = new ArrayList<>();
            for (Received r : spans) {
                if (r.traceId().equals(traceId)) {
                    trace.add(r);
                }
            }
            long left = end - System.nanoTime();
            if (complete.test(trace) || left <= 0) {
                return trace;
            }
            wait(Math.max(1, left / 1_000_000));
        }
    }

    @Override
    public void close() {
        server.shutdownNow();
    }
}

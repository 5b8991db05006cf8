package io.servegate.gateway.tracing;

/** How spans travel to the OTLP receiver. */
public enum OtlpProtocol {
    /** OTLP over gRPC (a collector's port 4317), sent with the gateway's own grpc-java. */
    GRPC,
    /** OTLP over HTTP with protobuf bodies (port 4318, path {@code /v1/traces}), sent with the JDK's HttpClient. */
    HTTP_PROTOBUF
}

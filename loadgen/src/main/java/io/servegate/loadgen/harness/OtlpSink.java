package io.servegate.loadgen.harness;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An OTLP/HTTP trace receiver that keeps nothing: it answers every export 200 with an empty
 * {@code ExportTraceServiceResponse} (zero bytes of protobuf) and counts the exports and their
 * bytes, so that a gateway with tracing on exports its spans as it would to a collector, at no
 * cost of the collector's on the machine.
 */
public final class OtlpSink implements AutoCloseable {

    private final HttpServer server;
    private final AtomicLong exports = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();

    private OtlpSink(HttpServer server) {
        this.server = server;
    }

    /** Starts the sink on a free loopback port. */
    public static OtlpSink start() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(GatewayProcess.HOST, 0), 0);
        OtlpSink sink = new OtlpSink(server);
        server.createContext("/", exchange -> {
            try (InputStream in = exchange.getRequestBody()) {
                sink.bytes.addAndGet(in.transferTo(OutputStream.nullOutputStream()));
            }
            sink.exports.incrementAndGet();
            exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.start();
        return sink;
    }

    /** The base URL to give as the gateway's {@code servegate.tracing.endpoint} (protocol http-protobuf). */
    public String url() {
        return "http://" + GatewayProcess.HOST + ":" + server.getAddress().getPort();
    }

    /** Export requests received so far. */
    public long exports() {
        return exports.get();
    }

    /** Bytes of protobuf received so far. */
    public long bytes() {
        return bytes.get();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}

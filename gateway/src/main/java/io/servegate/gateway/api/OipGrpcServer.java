package io.servegate.gateway.api;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * The Open Inference Protocol's gRPC service ({@link OipGrpcService}) on its own port (8033 by
 * default; port 0 turns it off). Handlers never block, so they run on the transport's own threads
 * rather than a separate executor. On stop the server takes no new calls and lets those in flight
 * finish (each within its deadline) for up to the grace period, then cancels the rest.
 */
public final class OipGrpcServer implements SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(OipGrpcServer.class);

    private final BindableService service;
    private final String address;
    private final int port;
    private final int maxMessageBytes;
    private final Duration grace;
    private final UnaryOperator<NettyServerBuilder> connections;
    private volatile Server server;

    /**
     * @param address         interface to bind; empty = all
     * @param port            the port; 0 = no server
     * @param maxMessageBytes largest request message accepted (larger: {@code RESOURCE_EXHAUSTED})
     * @param grace           how long stopping waits for calls in flight
     * @param connections     the port's timeouts, connection cap and admission of request bytes, applied to its server
     */
    public OipGrpcServer(BindableService service, String address, int port, int maxMessageBytes, Duration grace,
            UnaryOperator<NettyServerBuilder> connections) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("servegate.oip.grpc-port must be in 0..65535 (0 = off), got " + port);
        }
        this.service = service;
        this.address = address;
        this.port = port;
        this.maxMessageBytes = maxMessageBytes;
        this.grace = grace;
        this.connections = connections;
    }

    @Override
    public void start() {
        if (port == 0) {
            LOG.info("OIP gRPC server off (servegate.oip.grpc-port=0)");
            return;
        }
        NettyServerBuilder builder = address.isEmpty() ? NettyServerBuilder.forPort(port)
                : NettyServerBuilder.forAddress(new InetSocketAddress(address, port));
        try {
            server = connections.apply(builder).directExecutor().maxInboundMessageSize(maxMessageBytes)
                    .addService(service).build().start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve OIP gRPC on " + (address.isEmpty() ? "*" : address) + ":"
                    + port + " (servegate.oip.grpc-port): " + e.getMessage(), e);
        }
        LOG.info("Open Inference Protocol gRPC listening on {}:{}", address.isEmpty() ? "*" : address, port);
    }

    @Override
    public void stop() {
        Server s = server;
        if (s == null) {
            return;
        }
        s.shutdown();
        try {
            if (!s.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                s.shutdownNow();
            }
        } catch (InterruptedException e) {
            s.shutdownNow();
            Thread.currentThread().interrupt();
        }
        server = null;
    }

    @Override
    public boolean isRunning() {
        return server != null;
    }
}

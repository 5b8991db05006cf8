package io.servegate.gateway.connections;

import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.config.ServegateProperties;
import java.net.SocketAddress;
import java.util.function.UnaryOperator;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

/**
 * What an HTTP port (Reactor Netty) does against slow, idle and too many clients: each accepted
 * connection is counted against the port's cap, its client's share and the budget of all ports
 * (one over any of them is closed at once, unless an idle connection is evicted for it) and, when it
 * speaks HTTP/1.1, gets its {@link HttpRequestDeadlines}.
 */
public final class HttpConnectionGuard implements UnaryOperator<HttpServer> {

    private final ServegateProperties.Http timeouts;
    private final PortConnections port;

    public HttpConnectionGuard(ServegateProperties.Http timeouts, PortConnections port) {
        this.timeouts = timeouts;
        this.port = port;
    }

    /** The guard of the HTTP port named {@code port} in metrics and the log, as {@code connections} configures it. */
    public static HttpConnectionGuard of(ServegateProperties.Connections connections, ConnectionBudget budget,
            String port, MeterRegistry meters) {
        return new HttpConnectionGuard(connections.http(), PortConnections.of(connections, budget, port, meters));
    }

    @Override
    public HttpServer apply(HttpServer server) {
        return server.doOnChannelInit((observer, channel, remote) -> {
            SocketAddress client = channel.remoteAddress(); // the observer's remote is null on a server
            ClientConnection connection = port.tryOpen(client, channel::close);
            if (connection == null) {
                channel.close();
                return;
            }
            channel.closeFuture().addListener(f -> port.closed(connection));
            if (channel.pipeline().get(NettyPipeline.HttpCodec) == null) {
                // HTTP/2 (TLS h2): Reactor Netty's own settings govern it, not these HTTP/1.1 deadlines, and
                // its streams are not tracked, so it is never taken for idle
                connection.begin();
                return;
            }
            HttpRequestDeadlines deadlines = new HttpRequestDeadlines(timeouts.headerTimeout(),
                    timeouts.readTimeout(), timeouts.requestTimeout(), timeouts.idleTimeout(), port, connection);
            channel.pipeline().addBefore(NettyPipeline.HttpCodec, "servegate.requestReads", deadlines.reads())
                    .addAfter(NettyPipeline.HttpCodec, "servegate.requestMessages", deadlines.messages());
        });
    }
}

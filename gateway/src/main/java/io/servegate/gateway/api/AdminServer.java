package io.servegate.gateway.api;

import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.reactive.function.server.HandlerStrategies;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The admin API on its own port (1338 by default), bound to loopback unless configured
 * otherwise, so that changing what is deployed is not reachable from where queries come in.
 */
public final class AdminServer implements SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(AdminServer.class);

    private final RouterFunction<ServerResponse> routes;
    private final HandlerStrategies strategies;
    private final String address;
    private final int port;
    private final UnaryOperator<HttpServer> connections;
    private volatile DisposableServer server;

    /** @param connections the port's timeouts and connection cap, applied to its server */
    public AdminServer(RouterFunction<ServerResponse> routes, HandlerStrategies strategies, String address, int port,
            UnaryOperator<HttpServer> connections) {
        this.routes = routes;
        this.strategies = strategies;
        this.address = address;
        this.port = port;
        this.connections = connections;
    }

    @Override
    public void start() {
        ReactorHttpHandlerAdapter adapter = new ReactorHttpHandlerAdapter(
                RouterFunctions.toHttpHandler(routes, strategies));
        server = connections.apply(HttpServer.create().host(address).port(port)).handle(adapter).bindNow();
        LOG.info("admin API listening on {}:{}", address, server.port());
    }

    @Override
    public void stop() {
        DisposableServer s = server;
        if (s != null) {
            s.disposeNow();
            server = null;
        }
    }

    @Override
    public boolean isRunning() {
        return server != null;
    }

    /** The bound port (useful when configured as 0). */
    public int port() {
        return server.port();
    }
}

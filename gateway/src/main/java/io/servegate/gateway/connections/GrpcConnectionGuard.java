package io.servegate.gateway.connections;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.servegate.gateway.config.ServegateProperties;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

/**
 * What a gRPC port (OIP, fleet) does against slow, idle and too many clients: grpc-java's own handshake,
 * idle, age and keep-alive limits, metadata bound and calls per connection, and a connection cap, client share and
 * budget ({@link PortConnections}), which grpc-java lacks: the server channel counts what it
 * accepts and closes one over them before gRPC sees it. A
 * connection that closes without ever becoming a gRPC transport, after the handshake timeout, was
 * closed by that timeout and is counted so. A connection with no call in progress is idle, and
 * may be evicted for a client holding fewer connections while the port or budget is full.
 * {@link #close()} stops the event loops it made.
 */
public final class GrpcConnectionGuard implements UnaryOperator<NettyServerBuilder>, AutoCloseable {

    private final ServegateProperties.Grpc settings;
    private final PortConnections port;
    private final Set<SocketAddress> ready = ConcurrentHashMap.newKeySet();
    /** The connections open now, by remote address, for their calls to be counted on. */
    private final Map<SocketAddress, ClientConnection> open = new ConcurrentHashMap<>();
    private final EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final EventLoopGroup workers = new MultiThreadIoEventLoopGroup(NioIoHandler.newFactory());

    public GrpcConnectionGuard(ServegateProperties.Grpc settings, PortConnections port) {
        this.settings = settings;
        this.port = port;
    }

    /** The guard of the gRPC port named {@code port} in metrics and the log, as {@code connections} configures it. */
    public static GrpcConnectionGuard of(ServegateProperties.Connections connections, ConnectionBudget budget,
            String port, MeterRegistry meters) {
        return new GrpcConnectionGuard(connections.grpc(), PortConnections.of(connections, budget, port, meters));
    }

    @Override
    public NettyServerBuilder apply(NettyServerBuilder builder) {
        return builder.channelFactory(this::serverChannel).bossEventLoopGroup(boss).workerEventLoopGroup(workers)
                .addTransportFilter(new ServerTransportFilter() {
                    @Override
                    public Attributes transportReady(Attributes transport) {
                        SocketAddress remote = transport.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
                        if (remote != null) {
                            ready.add(remote);
                        }
                        return transport;
                    }
                })
                .addStreamTracerFactory(new CallsInProgress())
                .handshakeTimeout(nanos(settings.handshakeTimeout()), TimeUnit.NANOSECONDS)
                .maxConnectionIdle(nanos(settings.maxConnectionIdle()), TimeUnit.NANOSECONDS)
                .maxConnectionAge(nanos(settings.maxConnectionAge()), TimeUnit.NANOSECONDS)
                .maxConnectionAgeGrace(nanos(settings.maxConnectionAgeGrace()), TimeUnit.NANOSECONDS)
                .keepAliveTime(nanos(settings.keepAliveTime()), TimeUnit.NANOSECONDS)
                .keepAliveTimeout(nanos(settings.keepAliveTimeout()), TimeUnit.NANOSECONDS)
                .permitKeepAliveTime(nanos(settings.permitKeepAliveTime()), TimeUnit.NANOSECONDS)
                .permitKeepAliveWithoutCalls(settings.permitKeepAliveWithoutCalls())
                .maxInboundMetadataSize((int) settings.maxInboundMetadataSize().toBytes())
                .maxConcurrentCallsPerConnection(settings.maxConcurrentCallsPerConnection());
    }

    private NioServerSocketChannel serverChannel() {
        return new NioServerSocketChannel() {
            @Override
            protected int doReadMessages(List<Object> accepted) throws Exception {
                int from = accepted.size();
                int n = super.doReadMessages(accepted);
                for (int i = accepted.size() - 1; i >= from; i--) {
                    Channel child = (Channel) accepted.get(i);
                    ClientConnection connection = port.tryOpen(child.remoteAddress(), child::close);
                    if (connection != null) {
                        watch(child, connection);
                    } else {
                        accepted.remove(i);
                        child.unsafe().closeForcibly();
                        n--;
                    }
                }
                return n;
            }
        };
    }

    private void watch(Channel child, ClientConnection connection) {
        SocketAddress remote = child.remoteAddress();
        long start = System.nanoTime();
        open.put(remote, connection);
        child.closeFuture().addListener(f -> {
            open.remove(remote);
            port.closed(connection);
            if (!ready.remove(remote) && System.nanoTime() - start >= nanos(settings.handshakeTimeout())) {
                port.dropped(DropReason.HANDSHAKE_TIMEOUT);
            }
        });
    }

    /** Marks a connection busy from each call's start to its end, so that only idle ones are evicted. */
    private final class CallsInProgress extends ServerStreamTracer.Factory {
        @Override
        public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
            return new ServerStreamTracer() {
                /** null, then the connection its call started on, then {@code this} once closed. */
                private final AtomicReference<Object> state = new AtomicReference<>();

                @Override
                public void serverCallStarted(ServerCallInfo<?, ?> call) {
                    ClientConnection c = open.get(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
                    if (c != null) {
                        c.begin();
                        if (!state.compareAndSet(null, c)) {
                            c.end(); // closed already
                        }
                    }
                }

                @Override
                public void streamClosed(Status status) {
                    if (state.getAndSet(this) instanceof ClientConnection c) {
                        c.end();
                    }
                }
            };
        }
    }

    private static long nanos(Duration d) {
        return d.toNanos();
    }

    @Override
    public void close() {
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}

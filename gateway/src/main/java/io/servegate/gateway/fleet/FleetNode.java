package io.servegate.gateway.fleet;

import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.HandlerRegistry;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.core.fleet.OwnershipPlanner;
import io.servegate.gateway.api.GrpcRequestTracing;
import io.servegate.gateway.dispatch.ReplicaPool;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.tracing.QueryTracing;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This gateway's place in the fleet: the internal forwarding port ({@link ForwardService}) and
 * the membership ({@link FleetMember}) that advertises it. Started in that order, so a member is
 * reachable before it can own anything; closed in the reverse order, handing its versions to the
 * others and leaving the fleet first, so they take them over at once rather than after its lease.
 */
public final class FleetNode implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(FleetNode.class);

    /** How long closing waits for forwarded queries in flight. */
    private static final Duration GRACE = Duration.ofSeconds(5);

    private final Server server;
    private final FleetMember member;
    private final RedisFleetStore store;
    private final ForwardService service;
    private final String address;
    private final Settings settings;
    private final LongSupplier clock;
    private boolean left;

    /**
     * What a node is made of and how it is set up.
     *
     * @param bindAddress    interface of the forwarding port; empty = the advertised host's
     * @param maxInputLength the public endpoints' limit on one input's elements, applied to forwarded rows too
     * @param secret         what every call to the forwarding port must carry
     * @param drainTimeout   how long leaving waits for the others to take over this gateway's versions
     */
    public record Settings(String bindAddress, int port, String advertiseHost, String name, Duration heartbeat,
            Duration lease, double tolerance, double minRate, int maxMessageBytes, int maxInputLength,
            FleetSecret secret, Duration drainTimeout) {
    }

    private FleetNode(Server server, FleetMember member, RedisFleetStore store, ForwardService service,
            String address, Settings settings, LongSupplier clock) {
        this.server = server;
        this.member = member;
        this.store = store;
        this.service = service;
        this.address = address;
        this.settings = settings;
        this.clock = clock;
    }

    /**
     * Opens the forwarding port, then joins the fleet in {@code store} once {@code warm} completes:
     * a gateway still warming up is granted no versions.
     *
     * @param warm        completes when this gateway has warmed up
     * @param local       this gateway's replica pool, which schedules the versions it owns
     * @param connections the port's guards against slow, idle and too many clients and its admission of request bytes
     * @param tracing     traces forwarded queries, continuing their senders' traces
     * @param profiles    the replica profiles this gateway publishes for its versions and seeds its own with
     */
    public static FleetNode start(Settings settings, RedisFleetStore store, Registry registry, ReplicaPool local,
            ForwardClient client, ArrivalRates arrivals, LongSupplier clock, MeterRegistry meters,
            UnaryOperator<NettyServerBuilder> connections, QueryTracing tracing, CompletableFuture<Void> warm,
            PublishedProfiles profiles) {
        LateService services = new LateService();
        String host = settings.advertiseHost().isEmpty() ? defaultHost(settings.bindAddress())
                : settings.advertiseHost();
        // only where the other members reach it, unless told otherwise (0.0.0.0 = every interface)
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress(
                settings.bindAddress().isEmpty() ? host : settings.bindAddress(), settings.port()));
        Server server;
        try {
            server = connections.apply(builder).directExecutor().maxInboundMessageSize(settings.maxMessageBytes())
                    .fallbackHandlerRegistry(services).build().start();
        } catch (IOException e) {
            store.close();
            throw new UncheckedIOException("cannot open the fleet's forwarding port " + settings.port()
                    + " (servegate.fleet.port): " + e.getMessage(), e);
        }
        String address = host + ":" + server.getPort();
        String name = (settings.name().isEmpty() ? address : settings.name()).replaceAll("[^A-Za-z0-9._:-]", "_");
        FleetMember member = new FleetMember(store, name, address, settings.heartbeat(), settings.lease(),
                new OwnershipPlanner(settings.tolerance(), settings.minRate()), () -> versions(registry),
                arrivals::rates, clock, meters, state -> client.connect(state.addresses().entrySet().stream()
                        .filter(e -> !e.getValue().equals(address)).map(Map.Entry::getValue).toList()),
                new ReplicaHandover(profiles, store, local));
        profiles.bind(member, store, local);
        ForwardService forwards = new ForwardService(registry, local, member, client, clock, settings.maxInputLength());
        services.service = ServerInterceptors.intercept(forwards.bindService(),
                // the secret is checked first (the last interceptor runs first): refused calls are not traced
                new GrpcRequestTracing(tracing, Set.of(ForwardProtocol.PREDICT.getFullMethodName(),
                        ForwardProtocol.PREDICT_MANY.getFullMethodName())),
                settings.secret().checker(meters));
        registry.addListener(snapshot -> member.beatSoon());
        FleetNode node = new FleetNode(server, member, store, forwards, address, settings, clock);
        warm.thenRun(node::join);
        LOG.info("fleet member {} forwarding on {}{}{}", member.self(), address, settings.secret().enabled() ? ""
                : " without a fleet secret (servegate.fleet.require-secret=false)",
                warm.isDone() ? "" : "; joins once warmed up");
        return node;
    }

    /** The forwarding service, added once the member it needs exists (it needs the bound port). */
    private static final class LateService extends HandlerRegistry {
        volatile ServerServiceDefinition service;

        @Override
        public ServerMethodDefinition<?, ?> lookupMethod(String methodName, String authority) {
            ServerServiceDefinition s = service;
            return s == null ? null : s.getMethod(methodName);
        }
    }

    private static Set<String> versions(Registry registry) {
        return registry.snapshot().models().stream().map(m -> Ownership.key(m.name(), m.version()))
                .collect(Collectors.toSet());
    }

    private static String defaultHost(String bindAddress) {
        if (!bindAddress.isEmpty() && !bindAddress.equals("0.0.0.0") && !bindAddress.equals("::")) {
            return bindAddress;
        }
        try {
            return InetAddress.getLocalHost().getHostAddress();
        } catch (UnknownHostException e) {
            return InetAddress.getLoopbackAddress().getHostAddress();
        }
    }

    private synchronized void join() {
        if (!left) {
            member.start();
        }
    }

    /**
     * Hands this gateway's versions to the others: each is scheduled here until the member it goes
     * to is ready for it ({@link FleetMember#drain}, at most {@code drainTimeout}); then stops
     * heartbeating and ends its lease, so that the member planning next grants what is left at
     * once. Called before the gateway stops answering; what still reaches it is forwarded.
     */
    public synchronized void leave() {
        if (left) {
            return;
        }
        left = true;
        List<String> owned = member.owned();
        long start = clock.getAsLong();
        if (member.drain(settings.drainTimeout())) {
            if (!owned.isEmpty()) {
                LOG.info("fleet member {} handed {} over in {} ms; leaving", member.self(), owned,
                        (clock.getAsLong() - start) / 1_000_000);
            }
        } else if (member.alone()) {
            LOG.info("fleet member {} leaves with {}: no other gateway is left to take them over", member.self(),
                    member.owned());
        } else {
            LOG.warn("fleet member {} still owned {} after {} of draining; they are granted to the others as it "
                    + "leaves", member.self(), member.owned(), settings.drainTimeout());
        }
        member.close(); // no heartbeat after the one that leaves
        try {
            member.leave();
        } catch (RuntimeException e) {
            LOG.warn("leaving the fleet failed; the others take over when the lease ends: {}", e.toString());
        }
    }

    /**
     * Serves the warm-up's version {@code exercise} on the forwarding port until the returned
     * exercise is closed, and forwards to it there as another member would: with a client of its own
     * that carries the fleet secret, to the address this gateway advertises.
     */
    public HopExercise exercise(ForwardService.Exercise exercise) {
        return new HopExercise(service, new ForwardClient(settings.maxMessageBytes(), settings.secret()), member,
                address, clock, settings.maxMessageBytes(), exercise);
    }

    /** This gateway's membership: who owns what. */
    public FleetMember member() {
        return member;
    }

    /** The forwarding port actually bound. */
    public int port() {
        return server.getPort();
    }

    @Override
    public void close() {
        leave();
        server.shutdown();
        try {
            if (!server.awaitTermination(GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                server.shutdownNow();
            }
        } catch (InterruptedException e) {
            server.shutdownNow();
            Thread.currentThread().interrupt();
        }
        store.close();
    }
}

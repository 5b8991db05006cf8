package io.servegate.gateway.connections;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.config.ServegateProperties;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The connections of one port: how many are open against its cap, against each client's share
 * of it (connections from one remote address) and against the {@link ConnectionBudget} all ports
 * share, and which were dropped. A port or budget that is full makes room for a client holding
 * fewer connections by evicting an idle connection of the client holding the most
 * ({@link ConnectionSlots}), counted as {@code evicted} on the victim's port. Every drop is counted in {@code servegate.connections.dropped} (tags {@code port}, {@code reason});
 * the log gets one summary line per interval at most, however many connections a flood drops,
 * written at the end of the interval that its first drop began.
 */
public final class PortConnections {

    private static final Logger LOG = LoggerFactory.getLogger(PortConnections.class);

    private final String port;
    private final ConnectionSlots slots;
    private final ConnectionBudget budget;
    private final Duration logInterval;
    private final Scheduler scheduler;
    private final Map<DropReason, Counter> counters = new EnumMap<>(DropReason.class);
    private final Map<DropReason, LongAdder> unlogged = new EnumMap<>(DropReason.class);
    private final AtomicBoolean summaryDue = new AtomicBoolean();

    /**
     * @param port        the port's name in metrics and the log: {@code query}, {@code admin}, {@code grpc}, {@code fleet}
     * @param max         most open connections
     * @param perClient   most open connections from one remote address
     * @param budget      the connections all ports share
     * @param logInterval how often a summary may be logged
     * @param scheduler   times the summaries
     */
    public PortConnections(String port, int max, int perClient, ConnectionBudget budget, Duration logInterval,
            MeterRegistry meters, Scheduler scheduler) {
        this.port = port;
        this.slots = new ConnectionSlots(max, perClient);
        this.budget = budget;
        this.logInterval = logInterval;
        this.scheduler = scheduler;
        for (DropReason reason : DropReason.values()) {
            counters.put(reason, Counter.builder("servegate.connections.dropped")
                    .description("connections closed by the gateway (slow, idle, over the cap) or left mid-request")
                    .tag("port", port).tag("reason", reason.tag()).register(meters));
            unlogged.put(reason, new LongAdder());
        }
        Gauge.builder("servegate.connections.open", slots, ConnectionSlots::taken).description("open connections")
                .tag("port", port).register(meters);
    }

    /** The connections of the port named {@code port}, as {@code connections} configures them. */
    public static PortConnections of(ServegateProperties.Connections connections, ConnectionBudget budget,
            String port, MeterRegistry meters) {
        return new PortConnections(port, connections.maxConnections(), connections.maxConnectionsPerClient(), budget,
                connections.logInterval(), meters, Schedulers.parallel());
    }

    /**
     * Counts a new connection from {@code remote} in: {@code null} (counted as dropped) when the
     * port is full, the client holds its share already or the budget is spent, and nobody's idle
     * connection could fairly make room: it must then be closed. Otherwise the connection, which
     * {@code close} closes should it be evicted, and which must be {@link #closed} once it closes.
     */
    public ClientConnection tryOpen(SocketAddress remote, Runnable close) {
        ClientConnection connection = new ClientConnection(remote, () -> {
            dropped(DropReason.EVICTED);
            close.run();
        });
        ConnectionSlots.Refusal refusal = slots.tryTake(connection);
        if (refusal != null) {
            dropped(refusal == ConnectionSlots.Refusal.SHARE ? DropReason.PER_CLIENT_LIMIT : DropReason.LIMIT);
            return null;
        }
        if (!budget.tryTake(connection)) {
            slots.giveBack(connection);
            dropped(DropReason.BUDGET);
            return null;
        }
        connection.admitted();
        return connection;
    }

    /** Counts a connection that {@link #tryOpen} let in out again. */
    public void closed(ClientConnection connection) {
        budget.giveBack(connection);
        slots.giveBack(connection);
    }

    /** Counts a dropped connection, and logs a summary once the interval it begins is over. */
    public void dropped(DropReason reason) {
        counters.get(reason).increment();
        if (reason.logged()) {
            unlogged.get(reason).increment();
            if (summaryDue.compareAndSet(false, true)) {
                scheduler.schedule(this::logSummary, logInterval.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    private void logSummary() {
        summaryDue.set(false);
        long total = 0;
        StringJoiner reasons = new StringJoiner(", ");
        for (Map.Entry<DropReason, LongAdder> e : unlogged.entrySet()) {
            long n = e.getValue().sumThenReset();
            if (n > 0) {
                total += n;
                reasons.add(e.getKey().tag() + " " + n);
            }
        }
        if (total > 0) {
            LOG.warn("{} connections on the {} port closed or abandoned in the last {} ms: {} (counted in "
                    + "servegate_connections_dropped_total)", total, port, logInterval.toMillis(), reasons);
        }
    }
}

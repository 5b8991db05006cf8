package io.servegate.gateway.connections;

import com.sun.management.UnixOperatingSystemMXBean;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connections all ports together (query, admin, OIP gRPC, fleet) may hold: the process's
 * descriptor limit less a reserve for everything else the gateway opens (replica channels, Redis,
 * files, logs), so that a flood spread over the ports is refused by the gateway before the kernel
 * refuses it the descriptors its replicas' checks and its registry need. Each port's own cap and
 * per-client share apply within it ({@link PortConnections}). When the budget is spent, a
 * connection from a client holding fewer connections than another takes the slot of that
 * client's longest-idle connection on any port ({@link ConnectionSlots}).
 */
public final class ConnectionBudget {

    private static final Logger LOG = LoggerFactory.getLogger(ConnectionBudget.class);

    private final int total;
    private final ConnectionSlots slots;

    /** @param total most connections open on all ports together */
    public ConnectionBudget(int total) {
        if (total < 1) {
            throw new IllegalArgumentException("a connection budget must be at least 1, got " + total);
        }
        this.total = total;
        this.slots = new ConnectionSlots(total, Integer.MAX_VALUE);
    }

    /**
     * The budget of a process whose descriptor limit is {@code limit}: {@code limit - reserved},
     * the reserve taking at most half the limit (so a low {@code ulimit -n} still leaves ports
     * usable), and at most {@code cap} where {@code cap > 0}.
     *
     * @param limit the descriptor limit, {@code -1} when the platform does not say (no budget then but {@code cap})
     */
    public static int derive(long limit, int reserved, int cap) {
        long fromLimit = limit < 0 ? Integer.MAX_VALUE : Math.max(1, limit - Math.min(reserved, limit / 2));
        long budget = cap > 0 ? Math.min(cap, fromLimit) : fromLimit;
        return (int) Math.min(Integer.MAX_VALUE, budget);
    }

    /** The process's descriptor limit ({@code ulimit -n}), or {@code -1} where the platform does not say. */
    public static long descriptorLimit() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        return os instanceof UnixOperatingSystemMXBean unix ? unix.getMaxFileDescriptorCount() : -1;
    }

    /** The budget this process gets from its descriptor limit, logged and exposed as {@code servegate.connections.budget}. */
    public static ConnectionBudget ofProcess(int reserved, int cap, MeterRegistry meters) {
        long limit = descriptorLimit();
        ConnectionBudget budget = new ConnectionBudget(derive(limit, reserved, cap));
        LOG.info("connection budget: {} connections on all ports together (descriptor limit {}, {} reserved{})",
                budget.total, limit < 0 ? "unknown" : limit, reserved, cap > 0 ? ", capped at " + cap : "");
        Gauge.builder("servegate.connections.budget", budget, ConnectionBudget::total)
                .description("most connections open on all ports together").register(meters);
        return budget;
    }

    /** Takes one connection out of the budget, evicting an idle one where that is fair; false when it is spent. */
    boolean tryTake(ClientConnection connection) {
        return slots.tryTake(connection) == null;
    }

    /** Gives back a connection {@link #tryTake} took. */
    void giveBack(ClientConnection connection) {
        slots.giveBack(connection);
    }

    /** Most connections open on all ports together. */
    public int total() {
        return total;
    }

    /** Connections open on all ports together now. */
    public int open() {
        return slots.taken();
    }
}

package io.servegate.gateway.connections;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One accepted connection as {@link PortConnections} and the {@link ConnectionBudget} count it: its
 * client (remote address), whether a request is in progress on it and since when it is idle, and
 * how to close it when a client holding fewer connections needs its slot ({@link ConnectionSlots}).
 * Only an idle connection (no request in progress) of an admitted client is ever evicted.
 */
public final class ClientConnection {

    private final Object client;
    private final Runnable evict;
    private final AtomicInteger inProgress = new AtomicInteger();
    private final AtomicBoolean evicted = new AtomicBoolean();
    private volatile boolean admitted;
    private volatile long idleSince = System.nanoTime();

    /**
     * @param remote the client's address: its host, when it is an internet address, is the client
     * @param evict  counts and closes the connection when it is evicted
     */
    ClientConnection(SocketAddress remote, Runnable evict) {
        this.client = remote instanceof InetSocketAddress inet && inet.getAddress() != null ? inet.getAddress()
                : remote;
        this.evict = evict;
    }

    /** The client the connection counts against: its remote host, or its whole address when it has none. */
    Object client() {
        return client;
    }

    /** Marks it admitted by every count: only then may it be evicted. */
    void admitted() {
        admitted = true;
    }

    /** A request (or gRPC call) began on it. */
    public void begin() {
        inProgress.incrementAndGet();
    }

    /** A request (or gRPC call) on it ended. */
    public void end() {
        if (inProgress.decrementAndGet() == 0) {
            idleSince = System.nanoTime();
        }
    }

    /** Admitted and with no request in progress. */
    boolean idle() {
        return admitted && inProgress.get() == 0;
    }

    /** When it last became idle ({@link System#nanoTime()}). */
    long idleSince() {
        return idleSince;
    }

    /** Closes it for a client that needs its slot; once, however many counts choose it. */
    void evict() {
        if (evicted.compareAndSet(false, true)) {
            evict.run();
        }
    }
}

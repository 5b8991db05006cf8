package io.servegate.gateway.connections;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A number of connection slots shared fairly by client addresses: each client holds at most its
 * share, and when every slot is taken a connection from a client holding fewer than another takes
 * the slot of that other client's longest-idle connection, which is closed ({@link ClientConnection#evict()}).
 * The client holding the most connections gives first; a connection with a request in progress is
 * never evicted, and no client is evicted for one that would then hold as many as it. So many
 * addresses together can fill the slots, but not keep a new address out while one of them holds
 * more than its fair part in idle connections.
 */
final class ConnectionSlots {

    /** Why {@link #tryTake} refused a connection. */
    enum Refusal { SHARE, FULL }

    private final int capacity;
    private final int share;
    private final AtomicInteger taken = new AtomicInteger();
    private final Map<Object, Set<ClientConnection>> byClient = new ConcurrentHashMap<>();

    /**
     * @param capacity most connections held
     * @param share    most connections one client holds
     */
    ConnectionSlots(int capacity, int share) {
        this.capacity = capacity;
        this.share = share;
    }

    /**
     * Takes a slot for {@code connection}, evicting another client's idle connection when all are
     * taken and that is fair; {@code null} when taken, else why not (then nothing is held).
     */
    Refusal tryTake(ClientConnection connection) {
        boolean[] over = {false};
        byClient.compute(connection.client(), (client, held) -> {
            if (held != null && held.size() >= share) {
                over[0] = true;
                return held;
            }
            Set<ClientConnection> set = held == null ? ConcurrentHashMap.newKeySet() : held;
            set.add(connection);
            return set;
        });
        if (over[0]) {
            return Refusal.SHARE;
        }
        if (taken.incrementAndGet() <= capacity) {
            return null;
        }
        taken.decrementAndGet();
        if (evictFor(connection)) {
            return null; // the slot of the evicted connection is now its
        }
        leave(connection);
        return Refusal.FULL;
    }

    /** Gives back the slot {@code connection} took, unless it was evicted (its slot then went to another). */
    void giveBack(ClientConnection connection) {
        if (leave(connection)) {
            taken.decrementAndGet();
        }
    }

    /** Slots taken now. */
    int taken() {
        return taken.get();
    }

    private boolean leave(ClientConnection connection) {
        boolean[] left = {false};
        byClient.computeIfPresent(connection.client(), (client, held) -> {
            left[0] = held.remove(connection);
            return held.isEmpty() ? null : held;
        });
        return left[0];
    }

    /**
     * Evicts an idle connection of the client holding the most, if it holds more than {@code
     * newcomer}'s client will; the victim leaves its set here, so its slot passes to the newcomer
     * exactly once even while it closes by itself.
     */
    private boolean evictFor(ClientConnection newcomer) {
        Set<ClientConnection> own = byClient.get(newcomer.client());
        int holds = own == null ? 1 : own.size(); // counting the newcomer
        List<Map.Entry<Object, Set<ClientConnection>>> richer = new ArrayList<>();
        for (Map.Entry<Object, Set<ClientConnection>> e : byClient.entrySet()) {
            if (e.getValue().size() > holds) {
                richer.add(e);
            }
        }
        richer.sort(Comparator.comparingInt((Map.Entry<Object, Set<ClientConnection>> e) -> e.getValue().size())
                .reversed());
        for (Map.Entry<Object, Set<ClientConnection>> e : richer) {
            List<ClientConnection> idle = new ArrayList<>();
            for (ClientConnection c : e.getValue()) {
                if (c.idle()) {
                    idle.add(c);
                }
            }
            idle.sort(Comparator.comparingLong(ClientConnection::idleSince));
            for (ClientConnection victim : idle) {
                if (leave(victim)) {
                    victim.evict();
                    return true;
                }
            }
        }
        return false;
    }
}

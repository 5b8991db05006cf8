package io.servegate.gateway.connections;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * A port's cap, each client's share of it and the budget all ports share, counted per remote
 * address; the eviction of idle connections that makes room for a client holding fewer; and the
 * budget a descriptor limit leaves.
 */
class PortConnectionsTest {

    private final MeterRegistry meters = new SimpleMeterRegistry();
    /** Connections closed by eviction. */
    private final List<String> evicted = new ArrayList<>();

    /**
     * The ports' drop summaries wait on a clock that never moves: on a real one they were logged a
     * minute later into whichever test then ran, as drops on its query port.
     */
    private final VirtualTimeScheduler summaries = VirtualTimeScheduler.create();

    private PortConnections port(String name, int max, int perClient, ConnectionBudget budget) {
        return new PortConnections(name, max, perClient, budget, Duration.ofMinutes(1), meters, summaries);
    }

    /** Opens a connection from {@code host}, recording its eviction under {@code label}. */
    private ClientConnection open(PortConnections port, String host, String label) {
        return port.tryOpen(new InetSocketAddress(host, 40_000), () -> evicted.add(label));
    }

    private ClientConnection open(PortConnections port, String host) {
        return open(port, host, host);
    }

    private double dropped(String port, String reason) {
        return meters.get("servegate.connections.dropped").tags("port", port, "reason", reason).counter().count();
    }

    @Test
    void oneClientGetsItsShareAndOthersStillGetIn() {
        PortConnections query = port("query", 100, 3, new ConnectionBudget(100));
        List<ClientConnection> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            held.add(open(query, "127.0.0.3"));
        }
        assertThat(held).doesNotContainNull();
        assertThat(open(query, "127.0.0.3")).as("over its share").isNull();
        assertThat(open(query, "127.0.0.2")).as("another client").isNotNull();
        assertThat(dropped("query", "per-client-limit")).isEqualTo(1);

        query.closed(held.get(0));
        assertThat(open(query, "127.0.0.3")).as("a share given back is taken again").isNotNull();
        assertThat(evicted).isEmpty();
    }

    @Test
    void allPortsTogetherStayWithinTheBudget() {
        ConnectionBudget budget = new ConnectionBudget(5);
        PortConnections query = port("query", 100, 100, budget);
        PortConnections fleet = port("fleet", 100, 100, budget);
        for (int i = 0; i < 3; i++) {
            assertThat(open(query, "127.0.0." + (10 + i))).isNotNull();
        }
        ClientConnection first = open(fleet, "127.0.0.20");
        assertThat(first).isNotNull();
        assertThat(open(fleet, "127.0.0.21")).isNotNull();
        assertThat(open(fleet, "127.0.0.22")).as("the budget is spent, every client holds one").isNull();
        assertThat(open(query, "127.0.0.23")).isNull();
        assertThat(budget.open()).isEqualTo(5);
        assertThat(dropped("fleet", "budget")).isEqualTo(1);
        assertThat(dropped("query", "budget")).isEqualTo(1);

        fleet.closed(first);
        assertThat(open(query, "127.0.0.23")).as("a connection closed on one port frees one on another")
                .isNotNull();
        assertThat(open(query, "127.0.0.24")).isNull();
        assertThat(evicted).as("nobody held more than a newcomer would").isEmpty();
    }

    @Test
    void aConnectionRefusedByTheBudgetGivesItsShareBack() {
        ConnectionBudget budget = new ConnectionBudget(1);
        PortConnections admin = port("admin", 100, 1, budget);
        ClientConnection held = open(admin, "127.0.0.2");
        assertThat(held).isNotNull();
        assertThat(open(admin, "127.0.0.3")).isNull();
        admin.closed(held);
        assertThat(open(admin, "127.0.0.3")).as("its refused attempt holds no share").isNotNull();
    }

    @Test
    void aFullBudgetEvictsTheLongestIdleConnectionOfTheClientHoldingTheMost() {
        ConnectionBudget budget = new ConnectionBudget(10);
        PortConnections query = port("query", 100, 100, budget);
        PortConnections grpc = port("grpc", 100, 100, budget);
        // 127.0.0.3 holds 6 over two ports, 127.0.0.4 holds 4: the budget is full, each under its share
        List<ClientConnection> three = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            three.add(open(i < 3 ? query : grpc, "127.0.0.3", "3/" + i));
        }
        for (int i = 0; i < 4; i++) {
            assertThat(open(query, "127.0.0.4", "4/" + i)).isNotNull();
        }
        three.get(0).begin(); // a request in progress: never evicted
        three.get(2).begin();
        three.get(2).end(); // idle again, since now: the youngest idle

        assertThat(open(query, "127.0.0.2", "new")).as("a new client gets the slot of an idle connection")
                .isNotNull();
        assertThat(evicted).containsExactly("3/1");
        assertThat(dropped("query", "evicted")).isEqualTo(1);
        assertThat(budget.open()).isEqualTo(10);

        query.closed(three.get(1)); // the evicted connection closes: its slot went to the newcomer already
        assertThat(budget.open()).isEqualTo(10);
        assertThat(open(grpc, "127.0.0.5", "new2")).isNotNull();
        assertThat(evicted).as("the longest idle of the client holding the most, on any port")
                .containsExactly("3/1", "3/3");
        assertThat(dropped("grpc", "evicted")).isEqualTo(1);
    }

    @Test
    void evictionNeverLeavesAClientWithFewerThanTheNewcomersAndSparesBusyConnections() {
        ConnectionBudget budget = new ConnectionBudget(4);
        PortConnections query = port("query", 100, 100, budget);
        List<ClientConnection> held = new ArrayList<>();
        for (String host : List.of("127.0.0.3", "127.0.0.3", "127.0.0.4", "127.0.0.4")) {
            held.add(open(query, host));
        }
        assertThat(open(query, "127.0.0.3")).as("a client holding the most gets nothing by eviction").isNull();
        assertThat(open(query, "127.0.0.2")).as("two against one: evicted").isNotNull();
        assertThat(open(query, "127.0.0.5")).as("127.0.0.4 still holds two").isNotNull();
        assertThat(evicted).hasSize(2);
        assertThat(open(query, "127.0.0.6")).as("each holds one: nobody gives").isNull();
        assertThat(dropped("query", "budget")).isEqualTo(2);

        ConnectionBudget busyBudget = new ConnectionBudget(2);
        PortConnections admin = port("admin", 100, 100, busyBudget);
        ClientConnection a = open(admin, "127.0.0.7");
        ClientConnection b = open(admin, "127.0.0.7");
        a.begin();
        b.begin();
        assertThat(open(admin, "127.0.0.8")).as("only busy connections to take").isNull();
        b.end();
        assertThat(open(admin, "127.0.0.8")).isNotNull();
    }

    @Test
    void aFullPortEvictsLikeTheBudget() {
        PortConnections query = port("query", 3, 100, new ConnectionBudget(100));
        for (int i = 0; i < 3; i++) {
            open(query, "127.0.0.3", "3/" + i);
        }
        assertThat(open(query, "127.0.0.2", "new")).isNotNull();
        assertThat(evicted).containsExactly("3/0");
        assertThat(dropped("query", "limit")).isZero();
    }

    @Test
    void manyClientsTogetherCannotKeepANewOneOut() {
        AtomicInteger n = new AtomicInteger();
        ConnectionBudget budget = new ConnectionBudget(100);
        PortConnections query = port("query", 1000, 10, budget);
        for (int c = 0; c < 10; c++) {
            for (int i = 0; i < 10; i++) {
                assertThat(open(query, "127.0.1." + c, "flood" + n.incrementAndGet())).isNotNull();
            }
        }
        for (int c = 0; c < 20; c++) {
            assertThat(open(query, "127.0.2." + c)).as("new client %d", c).isNotNull();
        }
        assertThat(evicted).hasSize(20).allMatch(label -> label.startsWith("flood"));
        assertThat(budget.open()).isEqualTo(100);
    }

    @Test
    void theBudgetIsTheDescriptorLimitLessTheReserve() {
        assertThat(ConnectionBudget.derive(20_000, 1024, 0)).isEqualTo(18_976);
        assertThat(ConnectionBudget.derive(20_000, 1024, 300)).as("capped").isEqualTo(300);
        assertThat(ConnectionBudget.derive(1024, 1024, 0)).as("the reserve takes at most half").isEqualTo(512);
        assertThat(ConnectionBudget.derive(-1, 1024, 0)).as("no limit known").isEqualTo(Integer.MAX_VALUE);
        assertThat(ConnectionBudget.descriptorLimit()).as("this process's limit").isGreaterThan(0);
    }
}

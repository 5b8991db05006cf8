package io.servegate.gateway.connections;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/**
 * A port's cap, each client's share of it and the budget all ports share, counted per remote
 * address; and the budget a descriptor limit leaves.
 */
class PortConnectionsTest {

    private final MeterRegistry meters = new SimpleMeterRegistry();

    private PortConnections port(String name, int max, int perClient, ConnectionBudget budget) {
        return new PortConnections(name, max, perClient, budget, Duration.ofMinutes(1), meters, Schedulers.parallel());
    }

    private static InetSocketAddress from(String host) {
        return new InetSocketAddress(host, 40_000);
    }

    private double dropped(String port, String reason) {
        return meters.get("servegate.connections.dropped").tags("port", port, "reason", reason).counter().count();
    }

    @Test
    void oneClientGetsItsShareAndOthersStillGetIn() {
        PortConnections query = port("query", 100, 3, new ConnectionBudget(100));
        for (int i = 0; i < 3; i++) {
            assertThat(query.tryOpen(from("127.0.0.3"))).isTrue();
        }
        assertThat(query.tryOpen(from("127.0.0.3"))).as("over its share").isFalse();
        assertThat(query.tryOpen(from("127.0.0.2"))).as("another client").isTrue();
        assertThat(dropped("query", "per-client-limit")).isEqualTo(1);

        query.closed(from("127.0.0.3"));
        assertThat(query.tryOpen(from("127.0.0.3"))).as("a share given back is taken again").isTrue();
    }

    @Test
    void allPortsTogetherStayWithinTheBudget() {
        ConnectionBudget budget = new ConnectionBudget(5);
        PortConnections query = port("query", 100, 100, budget);
        PortConnections fleet = port("fleet", 100, 100, budget);
        for (int i = 0; i < 3; i++) {
            assertThat(query.tryOpen(from("127.0.0." + (10 + i)))).isTrue();
        }
        assertThat(fleet.tryOpen(from("127.0.0.20"))).isTrue();
        assertThat(fleet.tryOpen(from("127.0.0.21"))).isTrue();
        assertThat(fleet.tryOpen(from("127.0.0.22"))).as("the budget is spent").isFalse();
        assertThat(query.tryOpen(from("127.0.0.23"))).isFalse();
        assertThat(budget.open()).isEqualTo(5);
        assertThat(dropped("fleet", "budget")).isEqualTo(1);
        assertThat(dropped("query", "budget")).isEqualTo(1);

        fleet.closed(from("127.0.0.20"));
        assertThat(query.tryOpen(from("127.0.0.23"))).as("a connection closed on one port frees one on another")
                .isTrue();
        assertThat(query.tryOpen(from("127.0.0.24"))).isFalse();
    }

    @Test
    void aConnectionRefusedByTheBudgetGivesItsShareBack() {
        ConnectionBudget budget = new ConnectionBudget(1);
        PortConnections admin = port("admin", 100, 1, budget);
        assertThat(admin.tryOpen(from("127.0.0.2"))).isTrue();
        assertThat(admin.tryOpen(from("127.0.0.3"))).isFalse();
        admin.closed(from("127.0.0.2"));
        assertThat(admin.tryOpen(from("127.0.0.3"))).as("its refused attempt holds no share").isTrue();
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

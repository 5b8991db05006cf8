package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.sim.cli.SimCommand;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * A fleet of 8 gateways in front of 200 Zipf-popular model versions on 64 multi-model replicas,
 * against one central scheduler over all of them, on the same arrivals (virtual time).
 */
class FleetTest {

    private static final double RATE = 8000;

    /** 200 versions (Zipf 1) on 64 replicas whose budget holds 20 models each, SLO 100 ms, 2 s of Poisson arrivals. */
    private static ManyModelScenario models(double durationS) {
        return new ManyModelScenario(ModelPlacement.LRU, 200, 1, 64, 20, 50, 250, 12, 5, 0.5, 0.5, 100, RATE,
                durationS, 7);
    }

    /** One central scheduler over every version and replica: the reference, run once. */
    private static ManyModelResult central;

    private static ManyModelResult central() {
        if (central == null) {
            central = Simulation.run(models(2));
        }
        return central;
    }

    /** 40 versions on 8 replicas at 1,500 queries/s for 1 s: enough to compare schedules query by query. */
    private static ManyModelScenario small() {
        return new ManyModelScenario(ModelPlacement.LRU, 40, 1, 8, 10, 50, 250, 12, 5, 0.5, 0.5, 100, 1500, 1, 7);
    }

    private static long accountedFor(FleetResult r) {
        return r.atGateways().good() + r.atGateways().late() + r.defaulted() + r.lost();
    }

    @Test
    void eightGatewaysForwardingHalfAMillisecondEachWayKeepWithinFivePercentOfOneCentralScheduler() {
        ManyModelResult central = central();
        FleetResult fleet = Simulation.run(FleetScenario.of(models(2), 8, FleetScenario.Spread.ROUND_ROBIN, 0.5));

        assertThat(fleet.atGateways().arrived()).as("the same arrivals").isEqualTo(central.stats().arrived());
        assertThat(accountedFor(fleet)).as("every query leaves once").isEqualTo(fleet.atGateways().arrived());
        // round robin over 8 gateways: 7 queries in 8 arrive where their version is not owned
        assertThat((double) fleet.forwarded() / fleet.atGateways().arrived()).isBetween(0.85, 0.90);
        assertThat(fleet.lost()).isZero();
        assertThat(fleet.gateways()).allSatisfy(g -> assertThat(g.replicas()).isPositive());
        assertThat(fleet.gateways().stream().mapToInt(FleetResult.Gateway::versions).sum()).isEqualTo(200);
        assertThat(fleet.goodputRps()).isGreaterThanOrEqualTo(0.95 * central.goodputRps());
    }

    @Test
    void forwardsThatTakeMostOfTheSloCostGoodput() {
        ManyModelResult central = central();
        FleetResult slow = Simulation.run(FleetScenario.of(models(2), 8, FleetScenario.Spread.ROUND_ROBIN, 45));

        assertThat(accountedFor(slow)).isEqualTo(slow.atGateways().arrived());
        // 90 of the SLO's 100 ms on the two hops: the owners' batches are of one or two queries, and
        // a forwarded query for a version no replica holds is answered with the default (0.945 of central)
        assertThat(slow.goodputRps()).isLessThan(0.97 * central.goodputRps());
    }

    @Test
    void oneGatewayWithFreeForwardsIsTheCentralScheduler() {
        ManyModelResult central = Simulation.run(small());
        FleetResult one = Simulation.run(FleetScenario.of(small(), 1, FleetScenario.Spread.RANDOM, 0));

        assertThat(one.forwarded()).isZero();
        assertThat(one.atGateways().good()).isEqualTo(central.stats().good());
        assertThat(one.atGateways().late()).isEqualTo(central.stats().late());
        assertThat(one.owners().batches()).isEqualTo(central.stats().batches());
        assertThat(one.loads()).isEqualTo(central.loads());
    }

    /**
     * The last of 8 gateways joins at 1 s: the planner hands it versions at its first heartbeat, each
     * scheduled by its old owner until the hand-off completes, replicas follow the load, and queries
     * forwarded to an owner that just handed its version on are relayed: none is lost for want of
     * an owner, and the seconds after the join keep within 1 % of all queries.
     */
    @Test
    void aGatewayJoiningALoadedFleetIsHandedLoadWithoutLosingQueries() {
        FleetResult r = Simulation.run(new FleetScenario(models(3), 8, FleetScenario.Spread.ROUND_ROBIN, 0.5, -1, 0,
                0, 1));

        assertThat(accountedFor(r)).isEqualTo(r.atGateways().arrived());
        FleetResult.Gateway joined = r.gateways().get(7);
        assertThat(joined.live()).isTrue();
        assertThat(joined.versions()).isPositive();
        assertThat(joined.replicas()).as("%s", r.summary().get("per_gateway")).isPositive();
        assertThat(r.moves()).isGreaterThanOrEqualTo(joined.versions());
        assertThat(r.lost()).isZero();
        assertThat(r.lossShare(1, 2)).isLessThan(0.01);
    }

    @Test
    void aStoppedGatewaysVersionsAreLostUntilItsLeaseRunsOutThenServedByTheOthers() {
        FleetResult r = Simulation.run(new FleetScenario(models(3), 8, FleetScenario.Spread.ROUND_ROBIN, 0.5, 0, 1,
                0.5, -1));

        assertThat(accountedFor(r)).isEqualTo(r.atGateways().arrived());
        FleetResult.Gateway stopped = r.gateways().get(0);
        assertThat(stopped.live()).isFalse();
        assertThat(stopped.versions()).isZero();
        assertThat(stopped.replicas()).isZero();
        assertThat(r.moves()).isPositive();
        assertThat(r.gateways().stream().mapToInt(FleetResult.Gateway::versions).sum()).isEqualTo(200);
        assertThat(r.gateways().stream().mapToInt(FleetResult.Gateway::replicas).sum()).isEqualTo(64);
        assertThat(r.lost()).isPositive();
        long[] arrived = r.arrivedPerSecond();
        long[] good = r.goodPerSecond();
        assertThat((double) good[1] / arrived[1]).as("the second of the stop").isLessThan(0.95);
        assertThat((double) good[2] / arrived[2]).as("the second after the takeover").isGreaterThan(0.95);
    }

    @Test
    void theCommandWritesTheReportWithOneRunPerForwardLatency(@TempDir Path dir) throws Exception {
        int code = new CommandLine(new SimCommand()).execute("fleet", "--gateways", "4", "--models", "40",
                "--replicas", "8", "--rate", "500", "--duration-s", "1", "--forward-ms", "0.5,20", "--out",
                dir.toString());

        assertThat(code).isZero();
        assertThat(dir.resolve("fleet.html")).exists();
        assertThat(dir.resolve("fleet.png")).exists();
        String json = Files.readString(dir.resolve("fleet.json"));
        assertThat(json).contains("\"goodput_vs_central\"").contains("\"per_gateway\"");
        // the settings' forward latency, then each run's
        assertThat(json.split("\"forward_ms_each_way\"")).hasSize(4);
    }
}

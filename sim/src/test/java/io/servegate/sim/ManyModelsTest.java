package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.servegate.core.scheduling.RejectReason;
import io.servegate.sim.cli.SimCommand;
import io.servegate.sim.report.Summary;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The many-model scenario: 200 Zipf-popular models over two replicas whose budget holds 20. */
class ManyModelsTest {

    private static ManyModelScenario scenario(ModelPlacement placement, double rate) {
        return new ManyModelScenario(placement, 200, 1, 2, 20, 50, 250, 12, 5, 0.5, 0.5, 100, rate, 5, 3);
    }

    private static long accountedFor(ModelStats s) {
        return s.good() + s.late() + s.failed() + Summary.totalDefaults(s);
    }

    @Test
    void theStaticPlacementAnswersTheModelsOutsideItsBudgetWithTheDefaultAndNeverLoads() {
        ManyModelResult r = Simulation.run(scenario(ModelPlacement.STATIC, 100));

        assertThat(accountedFor(r.stats())).isEqualTo(r.stats().arrived());
        assertThat(r.loads()).isZero();
        assertThat(r.coldStarts()).isZero();
        // Zipf s = 1: the 20 most popular of 200 draw H(20) / H(200) = 61.2 % of the queries
        double placed = 1 - (double) r.stats().defaults(RejectReason.NO_REPLICA) / r.stats().arrived();
        assertThat(placed).isCloseTo(0.612, within(0.02));
        assertThat(r.stats().good()).isEqualTo(r.stats().arrived() - r.stats().defaults(RejectReason.NO_REPLICA));
    }

    @Test
    void atLightLoadLoadingOnDemandAnswersWhatTheStaticPlacementCannotAtTheCostOfColdStarts() {
        ManyModelResult lru = Simulation.run(scenario(ModelPlacement.LRU, 100));
        ManyModelResult fixed = Simulation.run(scenario(ModelPlacement.STATIC, 100));

        assertThat(lru.stats().arrived()).as("the same arrivals").isEqualTo(fixed.stats().arrived());
        assertThat(accountedFor(lru.stats())).isEqualTo(lru.stats().arrived());
        assertThat(lru.stats().late()).isZero();
        assertThat(lru.goodputRps()).isGreaterThan(0.98 * lru.offeredRps()).isGreaterThan(1.5 * fixed.goodputRps());
        assertThat(lru.coldStartRate()).isBetween(0.2, 0.6);
        assertThat(lru.loads()).isGreaterThan(lru.evictions()).isGreaterThan(0);
        assertThat(lru.evictions()).isGreaterThan(0);
        assertThat(lru.stats().latencyMs(99)).isGreaterThan(fixed.stats().latencyMs(99));
    }

    @Test
    void oneSeedOneResult() {
        Map<String, Object> a = Simulation.run(scenario(ModelPlacement.LRU, 400)).summary();
        Map<String, Object> b = Simulation.run(scenario(ModelPlacement.LRU, 400)).summary();
        a.remove("wall_ms");
        b.remove("wall_ms");
        assertThat(a).isEqualTo(b);
    }

    @Test
    void theCommandWritesItsTablePlotsAndNumbers(@TempDir Path dir) {
        int rc = new CommandLine(new SimCommand()).execute("many-models", "--models", "50", "--budget-models", "5",
                "--rates", "50,200", "--duration-s", "2", "--out", dir.toString());

        assertThat(rc).isZero();
        assertThat(dir.resolve("many-models.html")).content().contains("Many models on shared replicas", "lru",
                "static", "cold-start rate");
        assertThat(dir.resolve("many-models.png")).isNotEmptyFile();
        assertThat(dir.resolve("many-models-p99.png")).isNotEmptyFile();
        assertThat(dir.resolve("many-models.json")).content().contains("\"cold_start_rate\"", "\"placement\" : \"static\"");
    }
}

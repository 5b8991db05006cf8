package io.servegate.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import picocli.CommandLine;
import org.junit.jupiter.api.Test;

/** {@code loadgen tenants}' cases and capacity, from its command line (nothing is started). */
class TenantsCommandTest {

    private static TenantsCommand parse(String... args) {
        TenantsCommand c = new TenantsCommand();
        new CommandLine(c).parseArgs(args);
        return c;
    }

    @Test
    void theCasesAreTheSimulatorsAndTheCapacityItsRateByDefault() {
        TenantsCommand c = parse();
        assertThat(c.cases()).extracting(TenantsCommand.Case::name).containsExactly("2x-tiers", "2x-weights", "0.7x");
        assertThat(c.cases()).allSatisfy(k -> assertThat(k.mix()).hasSize(2));
        assertThat(c.cases().get(0).mix().stream().mapToDouble(a -> a.load()).sum()).isEqualTo(2.0);
        assertThat(c.cases().get(2).alone()).isTrue();
        // 10 + 1·b ms, SLO 50 ms: batches of 15 in 25 ms, as bin/sim tenants --rate 600
        assertThat(c.capacityPerSec()).isCloseTo(600, within(1e-9));
        assertThat(parse("--rate", "450").capacityPerSec()).isEqualTo(450);
    }

    @Test
    void appsReplaceTheCasesAndAreCheckedBeforeAnythingStarts() {
        TenantsCommand custom = parse("--apps", "a:standard:2@0.4,b:sheddable@1", "--alone");
        assertThat(custom.cases()).singleElement().satisfies(k -> {
            assertThat(k.mix().get(0).tenant().weight()).isEqualTo(2);
            assertThat(k.alone()).isTrue();
        });
        assertThatThrownBy(() -> parse("--apps", "a:urgent@1").cases())
                .isInstanceOf(CommandLine.ParameterException.class).hasMessageContaining("urgent");
        assertThatThrownBy(() -> parse("--apps", "a:critical@1", "--cases", "0.7x").cases())
                .hasMessageContaining("not both");
        assertThatThrownBy(() -> parse("--cases", "3x").cases()).hasMessageContaining("the cases are");
    }
}

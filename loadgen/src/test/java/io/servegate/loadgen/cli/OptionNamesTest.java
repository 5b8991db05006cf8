package io.servegate.loadgen.cli;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Every {@code loadgen} command spells a common option the same way: across all commands, one
 * name per option whatever its unit suffix ({@code --duration-s}, never also {@code --duration-ms}
 * or {@code --warmup} beside {@code --warmup-s}), none of the other spellings the same thing has
 * had ({@code --json} for {@code --out}, {@code --rates} for {@code --rate}), and each common option
 * declared once, in its shared mixin, so that its meaning and parsing are the same everywhere.
 */
class OptionNamesTest {

    /** Other spellings of an option, and the one loadgen uses. */
    private static final Map<String, String> OTHER_SPELLINGS = Map.ofEntries(entry("--json", "--out-file"),
            entry("--output", "--out"), entry("--gamma-cv2", "--cv2"), entry("--qps", "--rate"),
            entry("--rps", "--rate"), entry("--rates", "--rate"), entry("--slo", "--slo-ms"),
            entry("--duration", "--duration-s"), entry("--warmup", "--warmup-s"), entry("--jar", "--gateway-jar"));

    /** The common options and the one mixin that declares each. */
    private static final Map<String, Class<?>> SHARED = Map.ofEntries(entry("--out", ResultsOption.class),
            entry("--out-file", OutFileOption.class), entry("--duration-s", DurationOption.class),
            entry("--warmup-s", WarmupOption.class), entry("--rate", RateOption.class),
            entry("--seed", SeedOption.class), entry("--slo-ms", SloOption.class),
            entry("--target", TargetOption.class), entry("--gateway-jar", GatewayOptions.class),
            entry("--gateway-jvm-arg", GatewayOptions.class), entry("--gateway-arg", GatewayOptions.class),
            entry("--arrivals", ArrivalOptions.class), entry("--max-connections", ConnectionsOption.class),
            entry("--timeout-ms", TimeoutOption.class), entry("--beta-ms", BatchCostOption.class),
            entry("--alpha-ms", BatchCostOption.class));

    private final CommandLine loadgen = new CommandLine(new LoadGen());

    @Test
    void everyCommonOptionHasOneSpellingAcrossCommands() {
        Map<String, Set<String>> spellings = new TreeMap<>();
        Map<String, Set<String>> commands = new TreeMap<>();
        assertThat(loadgen.getSubcommands()).as("the commands").hasSizeGreaterThan(10);
        loadgen.getSubcommands().forEach((command, line) -> {
            for (OptionSpec option : line.getCommandSpec().options()) {
                for (String name : option.names()) {
                    if (name.startsWith("--")) {
                        spellings.computeIfAbsent(name.replaceFirst("-(s|ms|us)$", ""), k -> new TreeSet<>()).add(name);
                        commands.computeIfAbsent(name, k -> new TreeSet<>()).add(command);
                    }
                }
            }
        });
        List<String> wrong = new ArrayList<>();
        spellings.forEach((stem, names) -> {
            if (names.size() > 1) {
                names.forEach(n -> wrong.add(n + " in " + commands.get(n)));
            }
        });
        OTHER_SPELLINGS.forEach((other, used) -> {
            if (commands.containsKey(other)) {
                wrong.add(other + " in " + commands.get(other) + ": spelled " + used + " elsewhere");
            }
        });
        assertThat(wrong).as("options spelled more than one way").isEmpty();
        // the common ones are seen, in many commands
        for (String common : List.of("--out", "--duration-s", "--warmup-s", "--rate", "--slo-ms", "--seed",
                "--gateway-jar")) {
            assertThat(commands.get(common)).as(common).hasSizeGreaterThan(2);
        }
    }

    @Test
    void everyCommonOptionIsDeclaredByItsSharedMixin() {
        List<String> ownCopies = new ArrayList<>();
        Set<String> seen = new TreeSet<>();
        loadgen.getSubcommands().forEach((command, line) -> {
            for (OptionSpec option : line.getCommandSpec().options()) {
                Class<?> mixin = SHARED.get(option.longestName());
                if (mixin != null) {
                    seen.add(option.longestName());
                    Class<?> declaredBy = ((Field) option.userObject()).getDeclaringClass();
                    if (declaredBy != mixin) {
                        ownCopies.add(command + " declares " + option.longestName() + " in " + declaredBy.getSimpleName()
                                + ", not " + mixin.getSimpleName());
                    }
                }
            }
        });
        assertThat(ownCopies).as("common options declared outside their mixin").isEmpty();
        assertThat(seen).as("every shared option is used").isEqualTo(SHARED.keySet());
    }

    @Test
    void eachCommandKeepsItsDefaultsAndAGivenValueReplacesThem() {
        assertThat(command(AimdCommand.class, "aimd").duration.seconds()).isEqualTo(20);
        assertThat(command(DriveCommand.class, "drive", "--url", "http://h:1", "--app",
                "a").warmup.seconds()).isEqualTo(5);
        assertThat(command(CpuPerQueryCommand.class, "cpu-per-query").rate.all()).containsExactly(800.0, 1600.0,
                4000.0);
        assertThat(command(CpuPerQueryCommand.class, "cpu-per-query", "--rate",
                "1600").rate.all()).containsExactly(1600.0);
        assertThat(command(ColdShapesCommand.class, "cold-shapes", "--compare", "a=b.jar").slo.ms()).isEqualTo(50);
        assertThat(command(FleetCommand.class, "fleet").gatewayOptions.jvmArgs).containsExactly("-Xmx512m");
        assertThat(command(FleetCommand.class, "fleet").cost.betaMs()).isEqualTo(10);
        assertThat(command(ReplicaScalingCommand.class, "replica-scaling").cost.alphaMs()).isEqualTo(2);
        assertThat(command(AimdCommand.class, "aimd", "--beta-ms", "7", "--alpha-ms", "0.25").cost)
                .extracting(BatchCostOption::betaMs, BatchCostOption::alphaMs).containsExactly(7.0, 0.25);
        assertThat(command(FleetCommand.class, "fleet",
                "--gateway-jvm-arg=-Xmx2g").gatewayOptions.jvmArgs).containsExactly("-Xmx2g");
        assertThat(command(AimdCommand.class, "aimd").gatewayOptions.jvmArgs).containsExactly("-Xmx1g");
        assertThat(command(CpuPerQueryCommand.class, "cpu-per-query").connections.max()).isEqualTo(16);
        assertThat(command(GrpcDirectCommand.class, "grpc-direct", "--timeout-ms", "250").requestTimeout.duration())
                .isEqualTo(java.time.Duration.ofMillis(250));
        DriveCommand drive = command(DriveCommand.class, "drive", "--url", "http://h:1", "--app", "a");
        assertThat(drive.rate.given()).isFalse();
        org.assertj.core.api.Assertions.assertThatThrownBy(drive.rate::one).isInstanceOf(
                CommandLine.ParameterException.class).hasMessageContaining("give --rate");
        assertThat(new CommandLine(new LoadGen()).setErr(new java.io.PrintWriter(new java.io.StringWriter()))
                .execute("aimd", "--rate", "100,200")).as("two rates where one is taken: a usage error").isEqualTo(2);
    }

    private static <T> T command(Class<T> type, String... args) {
        return type.cast(new CommandLine(new LoadGen()).parseArgs(args).subcommand().commandSpec().userObject());
    }
}

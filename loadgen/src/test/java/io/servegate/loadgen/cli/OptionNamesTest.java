package io.servegate.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;

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
 * or {@code --warmup} beside {@code --warmup-s}), and none of the other spellings the same thing
 * has had ({@code --json} for {@code --out}, {@code --gamma-cv2} for {@code --cv2}).
 */
class OptionNamesTest {

    /** Other spellings of an option, and the one loadgen uses. */
    private static final Map<String, String> OTHER_SPELLINGS = Map.of("--json", "--out", "--output", "--out",
            "--gamma-cv2", "--cv2", "--qps", "--rate", "--rps", "--rate", "--slo", "--slo-ms", "--duration",
            "--duration-s", "--warmup", "--warmup-s");

    @Test
    void everyCommonOptionHasOneSpellingAcrossCommands() {
        Map<String, Set<String>> spellings = new TreeMap<>();
        Map<String, Set<String>> commands = new TreeMap<>();
        CommandLine loadgen = new CommandLine(new LoadGen());
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
        for (String common : List.of("--out", "--duration-s", "--warmup-s", "--rate", "--slo-ms", "--seed")) {
            assertThat(commands.get(common)).as(common).hasSizeGreaterThan(2);
        }
    }
}

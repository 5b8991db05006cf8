package io.servegate.loadgen.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.DoubleStream;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The offered load of a command in queries per second (a picocli mixin): one name for every
 * command, one rate for most, a comma-separated list for those that sweep rates.
 */
public final class RateOption {

    @Option(names = "--rate", split = ",", paramLabel = "QPS",
            description = "Offered queries per second (the commands that sweep rates take a comma-separated list) "
                    + "(default ${DEFAULT-VALUE}).")
    List<Double> rates;

    /** The command this option is part of, for usage errors. */
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    /** With these rates by default; none: the command's own default, or required. */
    RateOption(double... defaults) {
        rates = defaults.length == 0 ? null : new ArrayList<>(DoubleStream.of(defaults).boxed().toList());
    }

    /** Whether a rate was given, or defaulted. */
    public boolean given() {
        return rates != null && !rates.isEmpty();
    }

    /** The one rate of a command that offers one; a usage error if not exactly one was given. */
    public double one() {
        if (rates == null || rates.isEmpty()) {
            throw new ParameterException(command.commandLine(), "give --rate, in queries/s");
        }
        if (rates.size() != 1) {
            throw new ParameterException(command.commandLine(), "--rate wants one rate, in queries/s, got " + rates);
        }
        return rates.get(0);
    }

    /** Every rate of a command that sweeps them. */
    public List<Double> all() {
        return rates == null ? List.of() : List.copyOf(rates);
    }
}

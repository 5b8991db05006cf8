package io.servegate.loadgen.cli;

import io.servegate.loadgen.load.TimerJitter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Prints, as one line of JSON, how late a bare timer thread ran on this machine ({@link TimerJitter}). */
@Command(name = "timer-jitter", mixinStandardHelpOptions = true,
        description = "How late a bare timer thread runs on this machine, as one line of JSON.")
public final class TimerJitterCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    DurationOption duration = new DurationOption(10);

    @Option(names = "--period-us", defaultValue = "1000",
            description = "Timers are due 1 to 2 periods apart (default ${DEFAULT-VALUE}).")
    long periodMicros;

    @Override
    public Integer call() throws Exception {
        if (!(duration.seconds >= 0.001) || periodMicros < 1) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "--duration-s must be at least 0.001 and --period-us positive");
        }
        TimerJitter.Result r = TimerJitter.measure(Duration.ofNanos((long) (duration.seconds * 1e9)),
                Duration.ofNanos(periodMicros * 1000),
                System.nanoTime());
        spec.commandLine().getOut().println(TimerJitter.toJson(r));
        spec.commandLine().getOut().flush();
        return 0;
    }
}

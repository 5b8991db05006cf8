package io.servegate.sim.cli;

import io.servegate.sim.SimResult;
import io.servegate.sim.Simulation;
import io.servegate.sim.report.Environment;
import io.servegate.sim.report.Summary;
import io.servegate.workload.report.Charts;
import io.servegate.workload.report.HtmlReport;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code bin/sim}: runs one scenario in virtual time; subcommands sweep, replay a recording, reproduce Table 4, run selection policies, autoscale models, compare many-model placements, compare a fleet of gateways with one scheduler, plan a pipeline, or roll out a model version. */
@Command(name = "sim", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Simulates the gateway's schedulers in virtual time and prints/writes the run's summary.",
        subcommands = {SweepCommand.class, ReplayCommand.class, Table4Command.class, SelectionCommand.class,
                AutoscaleCommand.class, ManyModelsCommand.class, FleetCommand.class, PlanCommand.class,
                RolloutCommand.class, TenantsCommand.class})
public final class SimCommand implements Callable<Integer> {

    @Mixin
    SimOptions options;

    @Mixin
    OutputOptions output;

    public static void main(String[] args) {
        System.exit(new CommandLine(new SimCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        SimResult r = Simulation.run(options.builder().build());
        System.out.println(Summary.line(r));
        report("sim", "Simulated run", r, output);
        return 0;
    }

    /** Writes one run's JSON, and its HTML page with the batch-size plot when a folder was asked for. */
    static void report(String name, String title, SimResult r, OutputOptions output) throws Exception {
        Map<String, Object> summary = Summary.of(r);
        Path dir = output.write(name, summary);
        if (dir == null) {
            return;
        }
        Path png = Charts.batchSizes(dir.resolve(name + ".png"), "Batch sizes, share of queries", r.total().batchSizes());
        Map<String, Object> numbers = new LinkedHashMap<>(summary);
        numbers.remove("settings");
        numbers.remove("models");
        HtmlReport page = new HtmlReport(title, "The core's schedulers driven in virtual time by the simulator; "
                + "goodput counts predictions answered within their SLO, over the run's duration.");
        page.heading("Results").keyValues(numbers).image(png, "batch sizes");
        if (summary.get("models") instanceof List<?> models) {
            page.heading("Per model");
            for (Object m : models) {
                page.keyValues((Map<?, ?>) m);
            }
        }
        page.heading("Settings").keyValues(r.scenario().settings());
        page.heading("Run conditions").keyValues(Environment.now());
        page.link(dir.resolve(name + ".json"), "all numbers (JSON)");
        page.write(dir.resolve(name + ".html"));
    }
}

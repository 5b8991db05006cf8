package io.servegate.loadgen.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** The load generator's entry point: one subcommand per kind of benchmark. */
@Command(name = "loadgen", mixinStandardHelpOptions = true,
        description = "Benchmarks Servegate: open- and closed-loop load, HdrHistogram latencies, JSON and HTML reports.",
        subcommands = {GrpcDirectCommand.class, GatewayOverheadCommand.class, AimdCommand.class,
                BatchingGainCommand.class, GoodputCommand.class, ReplicaScalingCommand.class,
                SelectionReportCommand.class, SchedulingCommand.class, TimerJitterCommand.class,
                ProfileCommand.class, AutoscaleCommand.class, CapacityCheckCommand.class, ManyModelsCommand.class,

                PipelinePlanCommand.class, DriveCommand.class, ColdShapesCommand.class, ColdStartCommand.class,
                FleetCommand.class, CpuPerQueryCommand.class, ShadowCostCommand.class, TenantsCommand.class})
public final class LoadGen implements Runnable {

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        System.exit(new CommandLine(new LoadGen()).execute(args));
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required");
    }
}

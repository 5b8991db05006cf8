package io.servegate.sim.cli;

import io.servegate.sim.ManyModelScenario;
import io.servegate.sim.ModelPlacement;
import picocli.CommandLine.Option;

/** The models, replicas' costs and arrivals of a many-model run, as the commands that run one share them. */
final class ManyModelOptions {

    @Option(names = "--models", defaultValue = "200", description = "model versions (default: ${DEFAULT-VALUE})")
    int models;

    @Option(names = "--zipf", defaultValue = "1", description = "Zipf exponent of their popularity (default: ${DEFAULT-VALUE})")
    double zipf;

    @Option(names = "--budget-models", defaultValue = "20",
            description = "each replica's memory budget: the total size of this many most popular models (default: ${DEFAULT-VALUE})")
    int budgetModels;

    @Option(names = "--size-mb", split = ",", defaultValue = "50,250",
            description = "MIN,MAX: model sizes, uniform in between (default: ${DEFAULT-VALUE})")
    double[] sizeMb;

    @Option(names = "--load-gb-per-s", defaultValue = "12", description = "load speed: a model's load time is its size over this (default: ${DEFAULT-VALUE})")
    double loadGbPerS;

    @Option(names = "--beta-ms", defaultValue = "5", description = "fixed cost of a batch, β (default: ${DEFAULT-VALUE})")
    double betaMs;

    @Option(names = "--alpha-ms", defaultValue = "0.5", description = "cost per query, α (default: ${DEFAULT-VALUE})")
    double alphaMs;

    @Option(names = "--overhead-ms", defaultValue = "0.5", description = "round-trip transport overhead, half each way (default: ${DEFAULT-VALUE})")
    double overheadMs;

    @Option(names = "--slo-ms", defaultValue = "100", description = "SLO of every query (default: ${DEFAULT-VALUE})")
    double sloMs;

    @Option(names = "--duration-s", defaultValue = "30", description = "seconds of arrivals per run (default: ${DEFAULT-VALUE})")
    double durationS;

    @Option(names = "--seed", defaultValue = "1", description = "random seed (default: ${DEFAULT-VALUE})")
    long seed;

    /** The scenario these options describe, over {@code replicas} replicas at {@code rate} queries/s. */
    ManyModelScenario scenario(ModelPlacement placement, int replicas, double rate) {
        if (sizeMb.length != 2) {
            throw new IllegalArgumentException("--size-mb wants MIN,MAX");
        }
        return new ManyModelScenario(placement, models, zipf, replicas, budgetModels, sizeMb[0], sizeMb[1], loadGbPerS,
                betaMs, alphaMs, overheadMs, sloMs, rate, durationS, seed);
    }
}

package io.servegate.containers.emulated;

import io.servegate.sdk.ContainerOptions;
import io.servegate.sdk.ModelContainer;
import io.servegate.sdk.TensorType;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Serves an {@link EmulatedPredictor}: a model whose batches take β + α·b milliseconds. */
@Command(name = "emulated-container",
        description = "Emulates a GPU model: a batch of b takes beta + alpha*b ms, then gets deterministic labels.")
public final class EmulatedContainer implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ContainerOptions options;


    @Option(names = "--beta-ms", defaultValue = "${env:BETA_MS:-5}",
            description = "Fixed cost of a batch in ms (env BETA_MS, default ${DEFAULT-VALUE}).")
    double betaMs;

    @Option(names = "--alpha-ms", defaultValue = "${env:ALPHA_MS:-0.5}",
            description = "Cost per input of a batch in ms (env ALPHA_MS, default ${DEFAULT-VALUE}).")
    double alphaMs;

    @Option(names = "--classes", defaultValue = "${env:CLASSES:-10}",
            description = "Number of labels (env CLASSES, default ${DEFAULT-VALUE}).")
    int classes;

    @Option(names = "--input-type", defaultValue = "${env:INPUT_TYPE:-floats}",
            description = "Clipper input type: ints, floats, doubles, bytes or strings (env INPUT_TYPE, "
                    + "default ${DEFAULT-VALUE}).")
    String inputType;

    public static void main(String[] args) {
        System.exit(new CommandLine(new EmulatedContainer()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        TensorType<?> type;
        try {
            type = TensorType.forName(inputType);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        serve(type);
        return 0;
    }

    private <X> void serve(TensorType<X> type) throws Exception {
        EmulatedPredictor<X> predictor;
        try {
            predictor = new EmulatedPredictor<>(betaMs, alphaMs, classes);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        options.applyTo(ModelContainer.builder(type, TensorType.STRINGS, predictor)).build().runUntilShutdown();
    }
}

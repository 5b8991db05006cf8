package io.servegate.containers.noop;

import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ContainerOptions;
import io.servegate.sdk.ModelContainer;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * A model container whose "model" answers {@code "0"} to every input ({@link NoopPredictor}).
 * For overhead benchmarks only: it measures everything but prediction.
 */
@Command(name = "noop-container",
        description = "Serves a constant \"0\" per input, for overhead benchmarks only.")
public final class NoopContainer implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ContainerOptions options;


    @Option(names = "--input-type", defaultValue = "${env:INPUT_TYPE:-floats}",
            description = "Clipper input type: ints, floats, doubles, bytes or strings (env INPUT_TYPE, "
                    + "default ${DEFAULT-VALUE}).")
    String inputType;

    public static void main(String[] args) {
        System.exit(new CommandLine(new NoopContainer()).execute(args));
    }

    /**
     * A configured, not yet started noop container of the given input type, for embedding in a
     * benchmark or test; callers set the name, host and port on the builder as they need.
     */
    public static <X> ModelContainer.Builder<X, String> builder(TensorType<X> inputType) {
        return ModelContainer.builder(inputType, TensorType.STRINGS, new NoopPredictor<X>());
    }

    @Override
    public Integer call() throws Exception {
        ModelContainer<?, String> container;
        try {
            container = options.applyTo(builder(TensorType.forName(inputType))).build();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        container.runUntilShutdown();
        return 0;
    }
}

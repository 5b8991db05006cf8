package io.servegate.containers.onnx;

import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ContainerOptions;
import io.servegate.sdk.FileModelRepository;
import io.servegate.sdk.LoadedModel;
import io.servegate.sdk.ModelContainer;
import io.servegate.sdk.ModelFileLoader;
import io.servegate.sdk.ModelRepository;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Serves any ONNX model with ONNX Runtime (see {@link OnnxPredictor} for the interface a model
 * must have), or any number of them from a directory or a list of files, loaded on first use or
 * on request and unloaded least recently used first to stay within {@code --memory-budget-bytes}
 * (a model's size is its file's size). Inputs are numeric vectors of the model's input length;
 * requests whose vectors have another length are rejected with INVALID_ARGUMENT before they
 * reach the model.
 */
@Command(name = "onnx-container", description = "Serves ONNX models with ONNX Runtime: one (--model), or many "
        + "(--model-dir or --models) loaded on demand within --memory-budget-bytes.")
public final class OnnxContainer implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ContainerOptions options;


    @Option(names = "--model", defaultValue = "${env:MODEL_PATH}",
            description = "Path of the one .onnx file to serve, named --name (env MODEL_PATH).")
    Path model;

    @Option(names = "--model-dir", defaultValue = "${env:MODEL_DIR}",
            description = "Serve every model in this directory: <name>.onnx (version 1) or <name>/<version>/model.onnx "
                    + "(env MODEL_DIR).")
    Path modelDir;

    @Option(names = "--models", split = ",", description = "Serve these .onnx files, each named by its file name "
            + "without .onnx, version 1.")
    List<Path> models;

    @Option(names = "--device", defaultValue = "${env:DEVICE:-cpu}",
            description = "cpu or cuda; cuda needs the onnxruntime_gpu build (env DEVICE, default ${DEFAULT-VALUE}).")
    String device;

    @Option(names = "--device-id", defaultValue = "${env:DEVICE_ID:-0}",
            description = "CUDA device ordinal (env DEVICE_ID, default ${DEFAULT-VALUE}).")
    int deviceId;

    @Option(names = "--output", defaultValue = "${env:OUTPUT:-argmax}",
            description = "argmax: the index of the largest output element per input; raw: the output row "
                    + "as a JSON array (env OUTPUT, default ${DEFAULT-VALUE}).")
    String output;

    @Option(names = "--intra-op-threads", defaultValue = "${env:INTRA_OP_THREADS:-0}",
            description = "ONNX Runtime intra-op threads, 0 for its default (env INTRA_OP_THREADS, "
                    + "default ${DEFAULT-VALUE}).")
    int intraOpThreads;

    @Option(names = "--input-type", defaultValue = "${env:INPUT_TYPE:-floats}",
            description = "Clipper input type: floats, doubles or ints; doubles and ints are converted to float32 "
                    + "(env INPUT_TYPE, default ${DEFAULT-VALUE}).")
    String inputType;

    public static void main(String[] args) {
        System.exit(new CommandLine(new OnnxContainer()).execute(args));
    }

    /**
     * A (not yet built) container serving {@code predictor} for inputs of {@code inputType}, with
     * the input length fixed to the model's so that wrong lengths get INVALID_ARGUMENT. Callers
     * set name, host and port.
     */
    public static <X> ModelContainer.Builder<X, String> builder(OnnxPredictor predictor, TensorType<X> inputType) {
        return ModelContainer.builder(inputType, TensorType.STRINGS, predictor.forInputType(inputType))
                .inputLength(predictor.inputLength());
    }

    /**
     * Loads a model file as an {@link OnnxPredictor} with these settings for inputs of
     * {@code inputType}, for a {@link FileModelRepository}; closing the loaded model closes its session.
     */
    public static <X> ModelFileLoader<X, String> loader(TensorType<X> inputType, Device device, int deviceId,
            OutputMode outputMode, int intraOpThreads) {
        return file -> {
            OnnxPredictor predictor = new OnnxPredictor(file, device, deviceId, outputMode, intraOpThreads);
            return new LoadedModel<>(predictor.forInputType(inputType), predictor.inputLength(), predictor);
        };
    }

    @Override
    public Integer call() throws Exception {
        TensorType<?> type;
        Device dev;
        OutputMode mode;
        try {
            type = TensorType.forName(inputType);
            if (!type.numeric()) {
                throw new IllegalArgumentException("--input-type must be floats, doubles or ints for an ONNX model, got "
                        + inputType);
            }
            dev = parse(Device.class, "--device", device);
            mode = parse(OutputMode.class, "--output", output);
            int sources = (model != null ? 1 : 0) + (modelDir != null ? 1 : 0) + (models != null ? 1 : 0);
            if (sources != 1) {
                throw new IllegalArgumentException("give exactly one of --model, --model-dir and --models");
            }
            if (model != null && !Files.isRegularFile(model)) {
                throw new IllegalArgumentException("--model " + model + " is not a file");
            }
            if (model != null && options.name() == null) {
                throw new IllegalArgumentException("--model needs a model name (--name or MODEL_NAME)");
            }
            if (models != null) {
                for (Path p : models) {
                    if (!Files.isRegularFile(p)) {
                        throw new IllegalArgumentException("--models: " + p + " is not a file");
                    }
                }
            }
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        if (model == null) {
            serveRepository(type, dev, mode);
            return 0;
        }
        try (OnnxPredictor predictor = new OnnxPredictor(model, dev, deviceId, mode, intraOpThreads)) {
            options.applyTo(builder(predictor, type)).build().runUntilShutdown();
        }
        return 0;
    }

    private <X> void serveRepository(TensorType<X> type, Device dev, OutputMode mode) throws Exception {
        ModelContainer.Builder<X, String> builder;
        try {
            ModelFileLoader<X, String> loader = loader(type, dev, deviceId, mode, intraOpThreads);
            ModelRepository<X, String> repository = modelDir != null
                    ? FileModelRepository.inDirectory(modelDir, "onnx", loader)
                    : FileModelRepository.ofFiles(models, loader);
            builder = options.applyTo(ModelContainer.builder(type, TensorType.STRINGS, repository));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        builder.build().runUntilShutdown();
    }

    private static <E extends Enum<E>> E parse(Class<E> type, String option, String value) {
        try {
            return Enum.valueOf(type, value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + " must be one of "
                    + java.util.Arrays.toString(type.getEnumConstants()).toLowerCase(Locale.ROOT) + ", got '"
                    + value + "'");
        }
    }
}

package io.servegate.containers.onnx;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtProvider;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.Predictor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Runs any ONNX model whose first input is a float32 tensor {@code [batch, d1, d2, ...]} with
 * ONNX Runtime. Each input of a batch is one flat vector of {@code d = d1·d2·…} floats (row-major);
 * a batch of N becomes one tensor {@code [N, d1, d2, ...]} and one {@code session.run}.
 *
 * <p>The answer per input comes from the model's first output, {@code [N, ...]}: under
 * {@link OutputMode#ARGMAX} the index of the row's largest element, under {@link OutputMode#RAW}
 * the row as a JSON array. A rank-1 output {@code [N]} (a model that already emits labels) is
 * answered element by element.
 *
 * <p>Thread-safe: ONNX Runtime sessions accept concurrent {@code run} calls, and the input
 * buffer is per thread. Close it to release the native session.
 */
public final class OnnxPredictor implements Predictor<float[], String>, AutoCloseable {

    private final OrtEnvironment env;
    private final OrtSession session;
    private final String inputName;
    private final String outputName;
    /** The model's input shape; element 0 is the batch dimension (-1 when dynamic). */
    private final long[] inputShape;
    private final int inputLength;
    private final OutputMode outputMode;
    /** Reused per thread: a direct buffer is handed to ONNX Runtime without a copy. */
    private final ThreadLocal<FloatBuffer> buffers = new ThreadLocal<>();

    /** Loads a model for the CPU, answering argmax labels, with ONNX Runtime's default threading. */
    public OnnxPredictor(Path model) throws OrtException {
        this(model, Device.CPU, 0, OutputMode.ARGMAX, 0);
    }

    /**
     * Loads a model.
     *
     * @param device where to run it
     * @param deviceId the CUDA device ordinal (ignored for the CPU)
     * @param outputMode how outputs are rendered
     * @param intraOpThreads ONNX Runtime's intra-op thread count; 0 for its default
     * @throws IllegalArgumentException when the model's interface does not fit, or CUDA is asked
     *     of a build without it
     */
    public OnnxPredictor(Path model, Device device, int deviceId, OutputMode outputMode, int intraOpThreads)
            throws OrtException {
        this.env = OrtEnvironment.getEnvironment();
        this.outputMode = outputMode;
        try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
            if (intraOpThreads > 0) {
                options.setIntraOpNumThreads(intraOpThreads);
            }
            if (device == Device.CUDA) {
                if (!OrtEnvironment.getAvailableProviders().contains(OrtProvider.CUDA)) {
                    throw new IllegalArgumentException("--device cuda needs ONNX Runtime's CUDA execution provider, "
                            + "which this build lacks (available: " + OrtEnvironment.getAvailableProviders()
                            + "); build with -Donnxruntime.artifact=onnxruntime_gpu");
                }
                options.addCUDA(deviceId);
            }
            this.session = env.createSession(model.toString(), options);
        }
        try {
            Map.Entry<String, NodeInfo> input = session.getInputInfo().entrySet().iterator().next();
            Map.Entry<String, NodeInfo> output = session.getOutputInfo().entrySet().iterator().next();
            this.inputName = input.getKey();
            this.outputName = output.getKey();
            if (!(input.getValue().getInfo() instanceof TensorInfo info) || info.type != OnnxJavaType.FLOAT) {
                throw new IllegalArgumentException("model " + model + ": input '" + inputName + "' is "
                        + input.getValue().getInfo() + "; only float32 tensor inputs are supported");
            }
            this.inputShape = info.getShape();
            this.inputLength = rowLength(model, inputShape);
            if (!(output.getValue().getInfo() instanceof TensorInfo)) {
                throw new IllegalArgumentException("model " + model + ": output '" + outputName + "' is "
                        + output.getValue().getInfo() + "; only tensor outputs are supported");
            }
        } catch (RuntimeException e) {
            session.close();
            throw e;
        }
    }

    /** Name of the model input that receives the batch. */
    public String inputName() {
        return inputName;
    }

    /** Name of the model output that answers it. */
    public String outputName() {
        return outputName;
    }

    /** Floats per input: the product of the input's non-batch dimensions. */
    public int inputLength() {
        return inputLength;
    }

    /**
     * This predictor for inputs of {@code type}: floats as they are, doubles and ints converted
     * to float32 (the model's input type).
     *
     * @throws IllegalArgumentException for strings and bytes
     */
    @SuppressWarnings("unchecked")
    public <X> Predictor<X, String> forInputType(TensorType<X> type) {
        if (type == TensorType.FLOATS) {
            return (Predictor<X, String>) this;
        }
        if (type == TensorType.DOUBLES) {
            return inputs -> predictBatch(convert(inputs, v -> {
                double[] d = (double[]) v;
                float[] f = new float[d.length];
                for (int i = 0; i < d.length; i++) {
                    f[i] = (float) d[i];
                }
                return f;
            }));
        }
        if (type == TensorType.INTS) {
            return inputs -> predictBatch(convert(inputs, v -> {
                int[] d = (int[]) v;
                float[] f = new float[d.length];
                for (int i = 0; i < d.length; i++) {
                    f[i] = d[i];
                }
                return f;
            }));
        }
        throw new IllegalArgumentException("an ONNX model takes numeric vectors (floats, doubles or ints), not "
                + type.clipperName());
    }

    @Override
    public List<String> predictBatch(List<float[]> inputs) throws OrtException {
        // A model exported with a fixed batch dimension k runs in chunks of k, the last one padded.
        int chunk = inputShape[0] > 0 ? (int) inputShape[0] : inputs.size();
        List<String> out = new ArrayList<>(inputs.size());
        for (int from = 0; from < inputs.size(); from += chunk) {
            List<float[]> part = inputs.subList(from, Math.min(inputs.size(), from + chunk));
            List<String> answers = run(part, chunk);
            out.addAll(answers.subList(0, part.size()));
        }
        return out;
    }

    private List<String> run(List<float[]> rows, int batch) throws OrtException {
        FloatBuffer buf = buffer(batch * inputLength);
        for (float[] row : rows) {
            if (row.length != inputLength) {
                throw new IllegalArgumentException("input of length " + row.length + "; the model takes "
                        + inputLength);
            }
            buf.put(row);
        }
        while (buf.position() < batch * inputLength) {
            buf.put(0f); // padding for a fixed batch dimension
        }
        buf.flip();
        long[] shape = inputShape.clone();
        shape[0] = batch;
        try (OnnxTensor tensor = OnnxTensor.createTensor(env, buf, shape);
                OrtSession.Result result = session.run(Map.of(inputName, tensor), Set.of(outputName))) {
            OnnxValue value = result.get(0);
            if (!(value instanceof OnnxTensor out)) {
                throw new IllegalStateException("output '" + outputName + "' is not a tensor: " + value.getType());
            }
            return render(out, batch);
        }
    }

    private List<String> render(OnnxTensor out, int batch) {
        long[] shape = out.getInfo().getShape();
        if (shape.length == 0 || shape[0] != batch) {
            throw new IllegalStateException("output '" + outputName + "' has shape " + Arrays.toString(shape)
                    + " for a batch of " + batch);
        }
        Row row = Row.of(out);
        int width = (int) (row.size() / batch);
        List<String> answers = new ArrayList<>(batch);
        for (int i = 0; i < batch; i++) {
            int offset = i * width;
            if (shape.length == 1) {
                answers.add(row.format(offset));
            } else if (outputMode == OutputMode.ARGMAX) {
                answers.add(Integer.toString(row.argmax(offset, width)));
            } else {
                answers.add(row.json(offset, width));
            }
        }
        return answers;
    }

    private FloatBuffer buffer(int floats) {
        FloatBuffer buf = buffers.get();
        if (buf == null || buf.capacity() < floats) {
            buf = ByteBuffer.allocateDirect(Math.multiplyExact(floats, Float.BYTES)).order(ByteOrder.nativeOrder())
                    .asFloatBuffer();
            buffers.set(buf);
        }
        buf.clear();
        buf.limit(floats);
        return buf;
    }

    private static <X> List<float[]> convert(List<X> inputs, java.util.function.Function<Object, float[]> f) {
        List<float[]> out = new ArrayList<>(inputs.size());
        for (X x : inputs) {
            out.add(f.apply(x));
        }
        return out;
    }

    private static int rowLength(Path model, long[] shape) {
        if (shape.length < 2) {
            throw new IllegalArgumentException("model " + model + ": input shape " + Arrays.toString(shape)
                    + " has no batch dimension; expected [batch, d1, ...]");
        }
        long d = 1;
        for (int i = 1; i < shape.length; i++) {
            if (shape[i] <= 0) {
                throw new IllegalArgumentException("model " + model + ": input shape " + Arrays.toString(shape)
                        + " has a variable non-batch dimension; only the batch dimension may vary");
            }
            d = Math.multiplyExact(d, shape[i]);
        }
        return Math.toIntExact(d);
    }

    @Override
    public void close() throws OrtException {
        session.close();
    }
}

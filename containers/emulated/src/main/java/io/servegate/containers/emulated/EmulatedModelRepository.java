package io.servegate.containers.emulated;

import io.servegate.sdk.LoadedModel;
import io.servegate.sdk.ModelKey;
import io.servegate.sdk.ModelLoadException;
import io.servegate.sdk.ModelRepository;
import io.servegate.sdk.Predictor;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Many emulated models in one container: each load takes {@code loadMs} and each loaded model
 * counts {@code sizeBytes} against the container's memory budget, so that the gateway and the
 * benchmarks can exercise cold starts and LRU unloading (Clockwork) without real weights.
 *
 * @param <X> input type
 */
public final class EmulatedModelRepository<X> implements ModelRepository<X, String> {

    private final List<ModelKey> models;
    private final Set<ModelKey> known;
    private final long sizeBytes;
    private final double loadMs;
    private final Supplier<? extends Predictor<X, String>> predictors;

    /**
     * @param models the models it serves
     * @param sizeBytes the size each loaded model reports (&gt; 0)
     * @param loadMs how long each load takes, in milliseconds (&ge; 0)
     * @param predictors makes the predictor of a newly loaded model
     */
    public EmulatedModelRepository(List<ModelKey> models, long sizeBytes, double loadMs,
            Supplier<? extends Predictor<X, String>> predictors) {
        if (models.isEmpty()) {
            throw new IllegalArgumentException("an emulated repository needs at least one model");
        }
        if (sizeBytes <= 0) {
            throw new IllegalArgumentException("--model-size-bytes must be positive, got " + sizeBytes);
        }
        if (!(loadMs >= 0) || Double.isInfinite(loadMs)) {
            throw new IllegalArgumentException("--load-ms must be finite and non-negative, got " + loadMs);
        }
        this.models = List.copyOf(models);
        this.known = Set.copyOf(models);
        this.sizeBytes = sizeBytes;
        this.loadMs = loadMs;
        this.predictors = predictors;
    }

    /** {@code count} models named {@code prefix-0 … prefix-(count-1)}, all of version {@code version}. */
    public static List<ModelKey> numbered(String prefix, int count, String version) {
        List<ModelKey> keys = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            keys.add(new ModelKey(prefix + "-" + i, version));
        }
        return keys;
    }

    @Override
    public List<ModelKey> models() {
        return models;
    }

    @Override
    public long sizeBytes(ModelKey model) throws ModelLoadException {
        require(model);
        return sizeBytes;
    }

    @Override
    public LoadedModel<X, String> load(ModelKey model) throws ModelLoadException {
        require(model);
        EmulatedPredictor.sleepUntil(System.nanoTime() + Math.round(loadMs * 1_000_000.0));
        return new LoadedModel<>(predictors.get(), -1, () -> { });
    }

    private void require(ModelKey model) throws ModelLoadException {
        if (!known.contains(model)) {
            throw new ModelLoadException(ModelLoadException.Reason.NOT_FOUND, "unknown model " + model);
        }
    }
}

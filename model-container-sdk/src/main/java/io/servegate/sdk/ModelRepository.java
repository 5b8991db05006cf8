package io.servegate.sdk;

import java.util.List;

/**
 * The models a multi-model container can serve, loaded on demand (the model repository of
 * Triton and KServe). {@link ModelContainer} keeps the loaded ones within a memory budget and
 * unloads the least recently used when a load would exceed it (Clockwork's model cache).
 *
 * <p>The container calls {@link #sizeBytes} and {@link #load} from one loader thread, one model
 * at a time; {@link #models} may be called from any thread.
 *
 * @param <X> input type of every model
 * @param <Y> output type of every model
 */
public interface ModelRepository<X, Y> {

    /** Every model this repository can load now, loaded or not; may look again at its storage. */
    List<ModelKey> models();

    /**
     * The memory the model will take once loaded, as this repository measures it (the container
     * budgets with this number before it loads).
     *
     * @throws ModelLoadException with {@link ModelLoadException.Reason#NOT_FOUND} for an unknown model
     */
    long sizeBytes(ModelKey model) throws ModelLoadException;

    /**
     * Loads one model.
     *
     * @throws ModelLoadException NOT_FOUND for an unknown model or a missing file, INVALID_MODEL
     *     for one that exists but cannot be loaded
     */
    LoadedModel<X, Y> load(ModelKey model) throws ModelLoadException;
}

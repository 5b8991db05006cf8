package io.servegate.sdk;

import java.util.List;

/** The repository of a container built around one {@link Predictor}: that model, always loaded. */
final class SingleModelRepository<X, Y> implements ModelRepository<X, Y> {

    private final ModelKey key;
    private final LoadedModel<X, Y> model;

    SingleModelRepository(ModelKey key, Predictor<X, Y> predictor, int inputLength) {
        this.key = key;
        this.model = new LoadedModel<>(predictor, inputLength, () -> { });
    }

    ModelKey key() {
        return key;
    }

    @Override
    public List<ModelKey> models() {
        return List.of(key);
    }

    /** The predictor lives as long as the container whatever its size, so it is not budgeted. */
    @Override
    public long sizeBytes(ModelKey model) throws ModelLoadException {
        require(model);
        return 0;
    }

    @Override
    public LoadedModel<X, Y> load(ModelKey model) throws ModelLoadException {
        require(model);
        return this.model;
    }

    private void require(ModelKey model) throws ModelLoadException {
        if (!key.equals(model)) {
            throw new ModelLoadException(ModelLoadException.Reason.NOT_FOUND, "unknown model " + model);
        }
    }
}

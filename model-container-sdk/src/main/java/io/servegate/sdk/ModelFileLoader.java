package io.servegate.sdk;

import java.nio.file.Path;

/**
 * Turns one model file into a {@link LoadedModel}, for a {@link FileModelRepository}. Any
 * exception means the file is not a loadable model; the container answers INVALID_ARGUMENT with
 * its message.
 *
 * @param <X> input type
 * @param <Y> output type
 */
@FunctionalInterface
public interface ModelFileLoader<X, Y> {

    LoadedModel<X, Y> load(Path file) throws Exception;
}

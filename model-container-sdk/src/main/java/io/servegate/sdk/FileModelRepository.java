package io.servegate.sdk;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * A {@link ModelRepository} of model files: a fixed list, or a directory looked at again on every
 * index, load and miss, so that files added later are found. In a directory, a model is either
 * {@code <name>.<ext>} (version {@code 1}) or {@code <name>/<version>/model.<ext>} (Triton's
 * layout). A model's size is its file's size.
 *
 * @param <X> input type
 * @param <Y> output type
 */
public final class FileModelRepository<X, Y> implements ModelRepository<X, Y> {

    private static final String DEFAULT_VERSION = "1";

    private final Supplier<Map<ModelKey, Path>> files;
    private final ModelFileLoader<X, Y> loader;

    private FileModelRepository(Supplier<Map<ModelKey, Path>> files, ModelFileLoader<X, Y> loader) {
        this.files = files;
        this.loader = Objects.requireNonNull(loader, "loader");
    }

    /**
     * The models in {@code directory} whose files end in {@code .extension}.
     *
     * @throws IllegalArgumentException when {@code directory} is not a directory
     */
    public static <X, Y> FileModelRepository<X, Y> inDirectory(Path directory, String extension,
            ModelFileLoader<X, Y> loader) {
        if (!Files.isDirectory(directory)) {
            throw new IllegalArgumentException(directory + " is not a directory");
        }
        String suffix = "." + extension;
        return new FileModelRepository<>(() -> scan(directory, suffix), loader);
    }

    /**
     * The given files, each named by its file name without the extension, version {@code 1}.
     *
     * @throws IllegalArgumentException when two files have the same name
     */
    public static <X, Y> FileModelRepository<X, Y> ofFiles(List<Path> paths, ModelFileLoader<X, Y> loader) {
        TreeMap<ModelKey, Path> byKey = new TreeMap<>(ModelKey.ORDER);
        for (Path p : paths) {
            ModelKey key = new ModelKey(stem(p.getFileName().toString()), DEFAULT_VERSION);
            Path previous = byKey.put(key, p);
            if (previous != null) {
                throw new IllegalArgumentException("two model files are both named " + key + ": " + previous
                        + " and " + p);
            }
        }
        Map<ModelKey, Path> fixed = Collections.unmodifiableSortedMap(byKey);
        return new FileModelRepository<>(() -> fixed, loader);
    }

    @Override
    public List<ModelKey> models() {
        return new ArrayList<>(files.get().keySet());
    }

    @Override
    public long sizeBytes(ModelKey model) throws ModelLoadException {
        Path file = fileOf(model);
        try {
            return Files.size(file);
        } catch (NoSuchFileException e) {
            throw missing(model, file);
        } catch (IOException e) {
            throw new ModelLoadException(ModelLoadException.Reason.INVALID_MODEL, "model " + model + ": cannot read "
                    + file + ": " + e, e);
        }
    }

    @Override
    public LoadedModel<X, Y> load(ModelKey model) throws ModelLoadException {
        Path file = fileOf(model);
        if (!Files.isRegularFile(file)) {
            throw missing(model, file);
        }
        try {
            return loader.load(file);
        } catch (Exception e) {
            throw new ModelLoadException(ModelLoadException.Reason.INVALID_MODEL, "model " + model + " from " + file
                    + " cannot be loaded: " + e.getMessage(), e);
        }
    }

    private Path fileOf(ModelKey model) throws ModelLoadException {
        Path file = files.get().get(model);
        if (file == null) {
            throw new ModelLoadException(ModelLoadException.Reason.NOT_FOUND, "unknown model " + model
                    + ": the repository has no such file");
        }
        return file;
    }

    private static ModelLoadException missing(ModelKey model, Path file) {
        return new ModelLoadException(ModelLoadException.Reason.NOT_FOUND, "model " + model + ": file " + file
                + " does not exist");
    }

    private static Map<ModelKey, Path> scan(Path directory, String suffix) {
        Map<ModelKey, Path> found = new TreeMap<>(ModelKey.ORDER);
        try (Stream<Path> entries = Files.list(directory)) {
            for (Path entry : (Iterable<Path>) entries::iterator) {
                String fileName = entry.getFileName().toString();
                if (Files.isRegularFile(entry) && fileName.endsWith(suffix) && fileName.length() > suffix.length()) {
                    found.put(new ModelKey(stem(fileName), DEFAULT_VERSION), entry);
                } else if (Files.isDirectory(entry)) {
                    try (Stream<Path> versions = Files.list(entry)) {
                        for (Path version : (Iterable<Path>) versions::iterator) {
                            Path file = version.resolve("model" + suffix);
                            if (Files.isRegularFile(file)) {
                                found.put(new ModelKey(fileName, version.getFileName().toString()), file);
                            }
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list model directory " + directory, e);
        }
        return found;
    }

    private static String stem(String fileName) {
        int dot = fileName.lastIndexOf('.');
        return dot > 0 ? fileName.substring(0, dot) : fileName;
    }
}

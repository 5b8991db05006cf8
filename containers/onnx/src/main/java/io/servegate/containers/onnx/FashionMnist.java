package io.servegate.containers.onnx;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The Fashion-MNIST test set (10,000 images), from the Debian package {@code dataset-fashion-mnist}
 * ({@code /usr/share/datasets/fashion-mnist}, or {@code FASHION_MNIST_DIR}). Images are flattened
 * to 784 floats in [0, 1], as the models were trained.
 */
public final class FashionMnist {

    public static final int PIXELS = 28 * 28;

    private static volatile FashionMnist testSet;

    private final List<float[]> images;
    private final int[] labels;

    private FashionMnist(List<float[]> images, int[] labels) {
        this.images = images;
        this.labels = labels;
    }

    /** The test set, read once per JVM. */
    public static FashionMnist testSet() {
        FashionMnist t = testSet;
        if (t == null) {
            synchronized (FashionMnist.class) {
                if (testSet == null) {
                    testSet = load(dir());
                }
                t = testSet;
            }
        }
        return t;
    }

    /** The images in file order, each 784 floats in [0, 1]; unmodifiable. */
    public List<float[]> images() {
        return images;
    }

    /** The label (class index 0..9) of image {@code i}. */
    public int label(int i) {
        return labels[i];
    }

    public int size() {
        return labels.length;
    }

    private static Path dir() {
        String env = System.getenv("FASHION_MNIST_DIR");
        return Path.of(env != null && !env.isBlank() ? env : "/usr/share/datasets/fashion-mnist");
    }

    private static FashionMnist load(Path dir) {
        try {
            IdxReader.IdxArray x = IdxReader.read(find(dir, "t10k-images-idx3-ubyte"));
            IdxReader.IdxArray y = IdxReader.read(find(dir, "t10k-labels-idx1-ubyte"));
            if (x.dims().length != 3 || x.dims()[1] * x.dims()[2] != PIXELS || y.dims()[0] != x.dims()[0]) {
                throw new IllegalStateException("unexpected Fashion-MNIST shapes: images "
                        + java.util.Arrays.toString(x.dims()) + ", labels " + java.util.Arrays.toString(y.dims()));
            }
            int n = x.dims()[0];
            List<float[]> images = new ArrayList<>(n);
            int[] labels = new int[n];
            for (int i = 0; i < n; i++) {
                float[] image = new float[PIXELS];
                for (int p = 0; p < PIXELS; p++) {
                    image[p] = x.get(i * PIXELS + p) / 255f;
                }
                images.add(image);
                labels[i] = y.get(i);
            }
            return new FashionMnist(List.copyOf(images), labels);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path find(Path dir, String stem) {
        for (String name : new String[] {stem + ".gz", stem}) {
            Path p = dir.resolve(name);
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        throw new IllegalStateException("Fashion-MNIST file " + stem + "[.gz] not found in " + dir
                + ": apt-get install -y dataset-fashion-mnist, or set FASHION_MNIST_DIR");
    }
}

package com.example.fashion;

import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ContainerOptions;
import io.servegate.sdk.ModelContainer;
import io.servegate.sdk.Predictor;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import picocli.CommandLine;

/**
 * A Fashion-MNIST classifier as an Open Inference Protocol model container: each image gets the
 * class (0-9) of the nearest class centroid, computed at start-up from the 60,000 training images
 * in FASHION_MNIST_DIR (default: Debian's dataset-fashion-mnist).
 * Options: --name, --version, --port, --host, ... (env MODEL_NAME, MODEL_VERSION, PORT, HOST).
 */
public final class CentroidContainer {

    public static void main(String[] args) throws IOException, InterruptedException {
        ContainerOptions options = CommandLine.populateCommand(new ContainerOptions(), args);
        Path data = Path.of(System.getenv().getOrDefault("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist"));
        float[][] centroids = centroids(images(data.resolve("train-images-idx3-ubyte.gz")),
                labels(data.resolve("train-labels-idx1-ubyte.gz")));

        Predictor<float[], String> model = batch -> { // one output per input, in order
            List<String> out = new ArrayList<>(batch.size());
            for (float[] image : batch) {
                out.add(Integer.toString(nearest(centroids, image)));
            }
            return out;
        };
        ModelContainer<float[], String> container = options.applyTo(
                ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, model).name("fmnist-centroid"))
                .inputLength(784).build();
        container.runUntilShutdown(); // prints READY port=N; drains on SIGTERM
    }

    static float[][] centroids(float[][] images, int[] labels) {
        float[][] sum = new float[10][784];
        int[] count = new int[10];
        for (int i = 0; i < images.length; i++) {
            count[labels[i]]++;
            for (int p = 0; p < 784; p++) {
                sum[labels[i]][p] += images[i][p];
            }
        }
        for (int c = 0; c < 10; c++) {
            for (int p = 0; p < 784; p++) {
                sum[c][p] /= count[c];
            }
        }
        return sum;
    }

    static int nearest(float[][] centroids, float[] image) {
        int best = 0;
        double bestDistance = Double.MAX_VALUE;
        for (int c = 0; c < centroids.length; c++) {
            double d = 0;
            for (int p = 0; p < image.length; p++) {
                double diff = image[p] - centroids[c][p];
                d += diff * diff;
            }
            if (d < bestDistance) {
                bestDistance = d;
                best = c;
            }
        }
        return best;
    }

    /** IDX images (magic 2051, count, rows, columns, then bytes) as pixels in [0, 1]. */
    static float[][] images(Path file) throws IOException {
        try (DataInputStream in = idx(file, 2051)) {
            int n = in.readInt();
            int size = in.readInt() * in.readInt();
            byte[] pixels = new byte[size];
            float[][] images = new float[n][size];
            for (int i = 0; i < n; i++) {
                in.readFully(pixels);
                for (int p = 0; p < size; p++) {
                    images[i][p] = (pixels[p] & 0xff) / 255f;
                }
            }
            return images;
        }
    }

    /** IDX labels (magic 2049, count, then one byte each). */
    static int[] labels(Path file) throws IOException {
        try (DataInputStream in = idx(file, 2049)) {
            int[] labels = new int[in.readInt()];
            for (int i = 0; i < labels.length; i++) {
                labels[i] = in.readUnsignedByte();
            }
            return labels;
        }
    }

    private static DataInputStream idx(Path file, int magic) throws IOException {
        DataInputStream in = new DataInputStream(new GZIPInputStream(Files.newInputStream(file), 1 << 16));
        if (in.readInt() != magic) {
            in.close();
            throw new IOException(file + " is not an IDX file of magic " + magic);
        }
        return in;
    }
}

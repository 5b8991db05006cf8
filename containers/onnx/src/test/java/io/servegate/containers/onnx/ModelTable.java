package io.servegate.containers.onnx;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/** {@code models/models.json}: the trained models and the accuracy their trainer measured. */
final class ModelTable {

    /** One row of the table. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Entry(@JsonProperty("name") String name, @JsonProperty("file") String file,
            @JsonProperty("test_accuracy") double testAccuracy,
            @JsonProperty("test_accuracy_first2000") double testAccuracyFirst2000) {

        Path path() {
            return dir().resolve(file);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private ModelTable() {
    }

    /** The models directory: {@code servegate.models.dir}, or {@code models} in the module. */
    static Path dir() {
        return Path.of(System.getProperty("servegate.models.dir", "models"));
    }

    static List<Entry> entries() {
        Path json = dir().resolve("models.json");
        if (!Files.isRegularFile(json)) {
            throw new IllegalStateException(json.toAbsolutePath() + " is missing: train the models with "
                    + "containers/onnx/training/train_fashion_mnist.py");
        }
        try {
            return Arrays.asList(new ObjectMapper().readValue(json.toFile(), Entry[].class));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Entry named(String name) {
        return entries().stream().filter(e -> e.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no model '" + name + "' in models.json"));
    }
}

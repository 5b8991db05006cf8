package io.servegate.containers.onnx;

/** How {@link OnnxPredictor} turns the model's first output row into the string it answers. */
public enum OutputMode {
    /** The index of the row's largest element (the first on ties): a classifier's label. */
    ARGMAX,
    /** The whole row as a JSON array of numbers, e.g. {@code [0.1,-2.5,3.0]}. */
    RAW
}

package io.servegate.gateway.registry;

import java.util.Locale;

/**
 * What a pipeline stage's answer is, which decides what it can feed and what its edges can test.
 * A {@link #LABEL} or a {@link #LOGITS} stage answers a class label; the tensor types answer a
 * JSON array (or a string) that a next stage with {@link StageInput#PREVIOUS} takes as its input.
 */
public enum StageOutput {
    /** A class label, as the container answers it. */
    LABEL(null),
    /**
     * A JSON array of class scores (logits, e.g. the {@code onnx} container's {@code --output raw}):
     * the stage's label is the index of the largest, its confidence that class's softmax
     * probability. Feeds a {@code floats} model.
     */
    LOGITS("floats"),
    INTS("ints"),
    FLOATS("floats"),
    DOUBLES("doubles"),
    BYTES("bytes"),
    STRINGS("strings");

    private final String feeds;

    StageOutput(String feeds) {
        this.feeds = feeds;
    }

    /** The input type (Clipper's name) of a model this output can be given to, or null for none. */
    public String feeds() {
        return feeds;
    }

    /** Whether the stage's answer is a class label with a confidence that edges can test. */
    public boolean hasConfidence() {
        return this == LOGITS;
    }

    /** The name in the admin API and in Redis. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The value for a wire name; {@code null} is {@link #LABEL}. */
    public static StageOutput fromWireName(String name) {
        return WireNames.parse(values(), StageOutput::wireName, name, LABEL, "output");
    }
}

package io.servegate.core.selection;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * The default policy and Clipper's released behaviour: every query goes to the <em>first</em>
 * linked model, nothing is learned from feedback, and confidence is always 1.
 *
 * <p>The state is just the linked models, in link order (an unmodifiable {@code List<String>}).
 */
public final class SingleModelPolicy implements SelectionPolicy<List<String>> {

    /** The registered name. */
    public static final String NAME = "single";
    /** The shared instance (the policy has no parameters). */
    public static final SingleModelPolicy INSTANCE = new SingleModelPolicy();

    private static final StateCodec<List<String>> CODEC = new Codec();

    private SingleModelPolicy() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<String> init(List<String> models) {
        return Outputs.checkModels(models);
    }

    @Override
    public List<String> link(List<String> state, List<String> models) {
        Objects.requireNonNull(state, "state");
        return state.equals(models) ? state : Outputs.checkModels(models);
    }

    @Override
    public List<String> models(List<String> state) {
        return state;
    }

    @Override
    public List<String> select(List<String> state, Object input, RandomGenerator random) {
        return state.isEmpty() ? List.of() : List.of(state.get(0));
    }

    @Override
    public Optional<Combined> combine(List<String> state, Object input, Map<String, String> outputs,
                                      List<String> selected) {
        return firstAnswer(outputs, selected);
    }

    /** Observing teaches this policy nothing. */
    @Override
    public List<String> observe(List<String> state, Object input, String label, Map<String, String> outputs) {
        Outputs.requireLabel(label);
        return state;
    }

    @Override
    public StateCodec<List<String>> codec() {
        return CODEC;
    }

    /**
     * The output of the first selected model that answered, with confidence 1; shared with
     * {@link Exp3Policy}, which also queries one model.
     */
    static Optional<Combined> firstAnswer(Map<String, String> outputs, List<String> selected) {
        if (outputs == null || selected == null) {
            throw new IllegalArgumentException("outputs and selected must not be null");
        }
        List<String> distinct = selected.stream().distinct().toList();
        String output = null;
        int answered = 0;
        for (String m : distinct) {
            String o = outputs.get(m);
            if (o != null) {
                answered++;
                if (output == null) {
                    output = o;
                }
            }
        }
        return output == null ? Optional.empty() : Optional.of(new Combined(output, 1.0, answered, distinct.size()));
    }

    @Override
    public String toString() {
        return "SingleModelPolicy";
    }

    /**
     * Schema version 1: {@code byte 1, byte 'S', int n, n × modified-UTF-8 model name}.
     */
    private static final class Codec implements StateCodec<List<String>> {

        private static final byte VERSION = 1;
        private static final byte TAG = 'S';

        @Override
        public byte[] encode(List<String> state) {
            if (state == null) {
                throw new IllegalArgumentException("state must not be null");
            }
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                out.writeByte(VERSION);
                out.writeByte(TAG);
                out.writeInt(state.size());
                for (String m : state) {
                    out.writeUTF(m);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot happen with an in-memory stream", e);
            }
            return bytes.toByteArray();
        }

        @Override
        public List<String> decode(byte[] bytes) {
            if (bytes == null || bytes.length == 0) {
                throw new StateCodecException(NAME + " state is empty");
            }
            if (bytes[0] != VERSION) {
                throw new StateCodecException("unsupported " + NAME + " state schema version " + bytes[0]
                        + " (this gateway reads version " + VERSION
                        + "); it was written by a newer gateway or is corrupt");
            }
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes, 1, bytes.length - 1))) {
                byte t = in.readByte();
                if (t != TAG) {
                    throw new StateCodecException("state is not " + NAME + " state (policy tag '"
                            + WeightedStateCodec.printable(t) + "', expected 'S'); was the app's selection policy changed?");
                }
                int n = in.readInt();
                if (n < 0 || (long) n * 3 > in.available()) {
                    throw new StateCodecException("corrupt " + NAME + " state: " + n + " models in "
                            + bytes.length + " bytes");
                }
                List<String> models = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    models.add(in.readUTF());
                }
                if (in.available() > 0) {
                    throw new StateCodecException("corrupt " + NAME + " state: " + in.available() + " trailing bytes");
                }
                try {
                    return Outputs.checkModels(models);
                } catch (IllegalArgumentException e) {
                    throw new StateCodecException("corrupt " + NAME + " state: " + e.getMessage(), e);
                }
            } catch (EOFException e) {
                throw new StateCodecException("truncated " + NAME + " state (" + bytes.length + " bytes)", e);
            } catch (IOException e) {
                throw new StateCodecException("corrupt " + NAME + " state: " + e.getMessage(), e);
            }
        }
    }
}

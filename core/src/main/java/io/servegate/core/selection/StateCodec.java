package io.servegate.core.selection;

/**
 * Serializes a selection policy's state for a selection state store (the gateway's {@code SelectionStateStore}).
 *
 * <p>Every encoding starts with a schema-version byte; {@link #decode} rejects versions it does
 * not know with a {@link StateCodecException} rather than guessing, so a gateway never
 * misreads state written by a newer one.
 *
 * @param <S> the state type
 */
public interface StateCodec<S> {

    /**
     * @param state the state, not null
     * @return a new array the caller owns
     */
    byte[] encode(S state);

    /**
     * @param bytes an encoding produced by {@link #encode}
     * @return the state
     * @throws StateCodecException if the bytes are truncated, corrupt, of an unknown schema
     *                             version, or were written by another policy
     */
    S decode(byte[] bytes);
}

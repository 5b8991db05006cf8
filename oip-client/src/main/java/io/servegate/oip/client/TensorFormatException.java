package io.servegate.oip.client;

/** A tensor whose datatype, shape or contents do not fit what the receiver expects. */
public class TensorFormatException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    public TensorFormatException(String message) {
        super(message);
    }
}

package io.servegate.sdk;

/**
 * Thrown by a {@link Predictor} for an input it cannot predict because of the input itself (a
 * corrupt image, a value out of the model's domain), not because the model failed: the row is
 * the client's error. A container that {@linkplain ModelContainer.Builder#isolateRows isolates
 * rows} reports it as that row's error; one that does not fails the call with INVALID_ARGUMENT
 * instead of INTERNAL.
 */
public class InvalidInputException extends Exception {

    private static final long serialVersionUID = 1L;

    public InvalidInputException(String message) {
        super(message);
    }
}

package io.servegate.gateway.query;

/** One query's answer: the model's output, or the app's default with the reason. */
public record Prediction(String output, boolean isDefault, String explanation) {

    public static Prediction of(String output) {
        return new Prediction(output, false, null);
    }
}

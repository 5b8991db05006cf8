package io.servegate.gateway.query;

/**
 * One query's answer: the model's output, or the app's default with the reason. Ensemble
 * policies also say how confident they are and how many selected models answered in time.
 *
 * @param confidence the policy's confidence in [0, 1], or NaN for a single model
 * @param answered   models that answered by the deadline (−1 for a single model)
 * @param selected   models the policy queried (−1 for a single model)
 * @param reason     why the default was given (null for a prediction)
 */
public record Prediction(String output, boolean isDefault, String explanation, double confidence, int answered,
        int selected, DefaultReason reason) {

    public static Prediction of(String output) {
        return new Prediction(output, false, null, Double.NaN, -1, -1, null);
    }

    public static Prediction ofDefault(String output, DefaultReason reason, String explanation) {
        return new Prediction(output, true, explanation, Double.NaN, -1, -1, reason);
    }

    /** The same answer with the ensemble's figures attached. */
    public Prediction withEnsemble(double confidence, int answered, int selected) {
        return new Prediction(output, isDefault, explanation, confidence, answered, selected, reason);
    }
}

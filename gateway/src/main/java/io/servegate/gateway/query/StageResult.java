package io.servegate.gateway.query;

import io.servegate.gateway.registry.PipelineStage;
import io.servegate.gateway.registry.StageOutput;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A pipeline stage's answer.
 *
 * @param output     what the stage answered (the container's output, or a combine stage's label)
 * @param answer     what the pipeline answers when the stage is its last: the label for
 *                   {@code logits}, else the output
 * @param confidence what conditional edges test: a {@code logits} stage's softmax probability of
 *                   its label, a combine stage's vote share; NaN otherwise
 */
record StageResult(String output, String answer, double confidence) {

    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    /** A model stage's output, read as its declared {@link StageOutput}. */
    static StageResult of(PipelineStage stage, String output) {
        if (stage.output() != StageOutput.LOGITS) {
            return new StageResult(output, output, Double.NaN);
        }
        double[] logits = logits(stage, output);
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        double sum = 0;
        for (double l : logits) {
            sum += Math.exp(l - logits[best]); // shifted by the largest, so that exp cannot overflow
        }
        return new StageResult(output, Integer.toString(best), 1 / sum);
    }

    /** The majority label of the predecessors' answers (ties: the first listed); confidence its vote share. */
    static StageResult majority(List<StageResult> answered) {
        Map<String, Integer> votes = new LinkedHashMap<>();
        answered.forEach(r -> votes.merge(r.answer(), 1, Integer::sum));
        Map.Entry<String, Integer> best = null;
        for (Map.Entry<String, Integer> e : votes.entrySet()) {
            if (best == null || e.getValue() > best.getValue()) {
                best = e;
            }
        }
        return new StageResult(best.getKey(), best.getKey(), best.getValue() / (double) answered.size());
    }

    private static double[] logits(PipelineStage stage, String output) {
        JsonNode n;
        try {
            n = MAPPER.readTree(output);
        } catch (RuntimeException e) {
            n = null;
        }
        List<Double> values = new ArrayList<>();
        if (n != null && n.isArray()) {
            n.forEach(e -> values.add(e.isNumber() ? e.doubleValue() : Double.NaN));
        }
        if (values.isEmpty() || values.stream().anyMatch(v -> !Double.isFinite(v))) {
            throw new PredictionException(DefaultReason.CONTAINER_ERROR, "stage '" + stage.name() + "' answered "
                    + brief(output) + ", not a JSON array of logits (is the container's output raw?)");
        }
        return values.stream().mapToDouble(Double::doubleValue).toArray();
    }

    private static String brief(String s) {
        return "'" + (s.length() > 40 ? s.substring(0, 40) + "…" : s) + "'";
    }
}

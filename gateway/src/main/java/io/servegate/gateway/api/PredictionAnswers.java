package io.servegate.gateway.api;

import io.servegate.gateway.query.Prediction;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.JsonNode;

/**
 * Writes Clipper's answer to one query straight to a generator: {@code query_id}, {@code output}
 * (nested as JSON when it is JSON, else a string), {@code default}, the default's explanation and
 * an ensemble's figures. Building a map of it first and serialising that made the map, boxed
 * numbers and a serializer context per answer, and had the mapper look up a serializer for each
 * value; the bytes are the same.
 */
final class PredictionAnswers {

    private PredictionAnswers() {
    }

    static void write(JsonGenerator g, JsonBodies bodies, Prediction p, long queryId) {
        g.writeStartObject();
        g.writeNumberProperty("query_id", queryId);
        g.writeName("output");
        JsonNode nested = bodies.tryParse(p.output());
        if (nested != null) {
            g.writeTree(nested);
        } else {
            g.writeString(p.output());
        }
        g.writeBooleanProperty("default", p.isDefault());
        if (p.isDefault()) {
            g.writeStringProperty("default_explanation", p.explanation());
        }
        if (p.selected() >= 0) {
            g.writeNumberProperty("confidence", p.confidence());
            g.writeNumberProperty("models_answered", p.answered());
            g.writeNumberProperty("models_selected", p.selected());
        }
        g.writeEndObject();
    }
}

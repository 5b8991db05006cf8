package io.servegate.gateway.query;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * One model version's answers by outcome: good (a prediction within the SLO), default, or late
 * (a prediction after it). Goodput is the rate of good answers; the bad rate, defaults plus late
 * per answer, is Symphony's scaling signal.
 */
final class ModelMeters {

    private final Counter good;
    private final Counter defaulted;
    private final Counter late;

    ModelMeters(String model, String version, MeterRegistry registry) {
        this.good = counter(model, version, "good", registry);
        this.defaulted = counter(model, version, "default", registry);
        this.late = counter(model, version, "late", registry);
    }

    private static Counter counter(String model, String version, String outcome, MeterRegistry registry) {
        return Counter.builder("servegate.model.answers").tag("model", model).tag("version", version)
                .tag("outcome", outcome).description("Answers of queries to a model version, by outcome")
                .register(registry);
    }

    void answered(boolean isDefault, boolean afterSlo) {
        (isDefault ? defaulted : afterSlo ? late : good).increment();
    }
}

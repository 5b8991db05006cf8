package io.servegate.loadgen.harness;

import java.util.Map;
import java.util.TreeMap;

/**
 * One app's queries as the gateway counts them, from its Prometheus scrape: answers, answers after
 * the app's SLO, defaults by reason, queries shed for higher tiers or other apps' shares, and the
 * model time charged to the app ({@code servegate_model_time_seconds_total}, all its models
 * together). Two scrapes around a window give the window's ({@link #minus}).
 *
 * @param answers      queries answered (predictions and defaults)
 * @param late         answers that left after the app's SLO
 * @param defaults     answers with the default output, by reason
 * @param shed         queries shed at once by their model version's scheduler
 * @param modelSeconds model time charged to the app; null where the gateway does not export it
 */
public record AppMetrics(long answers, long late, Map<String, Long> defaults, long shed, Double modelSeconds) {

    /** App {@code app}'s series in {@code scrape} (none: all zero). */
    public static AppMetrics of(PrometheusText scrape, String app) {
        Map<String, Long> defaults = new TreeMap<>();
        scrape.sumBy("servegate_defaults_total", "app", app, "reason")
                .forEach((r, n) -> defaults.put(r, Math.round(n)));
        boolean exported = scrape.samples().stream()
                .anyMatch(s -> s.name().equals("servegate_model_time_seconds_total"));
        return new AppMetrics(Math.round(scrape.sum("servegate_request_latency_seconds_count", "app", app)),
                Math.round(scrape.sum("servegate_answers_late_total", "app", app)), defaults,
                Math.round(scrape.sum("servegate_shed_total", "app", app)),
                exported ? scrape.sum("servegate_model_time_seconds_total", "app", app) : null);
    }

    /** What happened between {@code earlier} and this scrape. */
    public AppMetrics minus(AppMetrics earlier) {
        Map<String, Long> defaults = new TreeMap<>(this.defaults);
        earlier.defaults.forEach((r, n) -> defaults.merge(r, -n, Long::sum));
        defaults.values().removeIf(n -> n == 0);
        return new AppMetrics(answers - earlier.answers, late - earlier.late, defaults, shed - earlier.shed,
                modelSeconds == null ? null : modelSeconds - (earlier.modelSeconds == null ? 0 : earlier.modelSeconds));
    }
}

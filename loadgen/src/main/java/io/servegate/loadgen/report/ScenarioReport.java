package io.servegate.loadgen.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.loadgen.scenario.Measurement;
import io.servegate.workload.report.HtmlReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The JSON of one scenario run ({@code <scenario>.json} in its results folder).
 *
 * @param scenario the subcommand
 * @param startedAt ISO-8601 instant
 * @param settings the command's options
 * @param environment machine (cores), JVM, load average at start and end
 * @param gateways each gateway child process: command, ports, log, problems seen in its log
 * @param measurements every measured run, in the order run
 * @param findings sentences that read the numbers (e.g. flat top or collapse)
 */
public record ScenarioReport(String scenario, String startedAt, Map<String, Object> settings,
        Map<String, Object> environment, List<Map<String, Object>> gateways, List<Measurement> measurements,
        List<String> findings) {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /** Writes {@code dir/<scenario>.json} and returns it. */
    public Path writeJson(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve(scenario + ".json");
        JSON.writeValue(file.toFile(), this);
        return file;
    }

    /** A page with the conditions, settings, findings and the measurements table; add plots after. */
    public HtmlReport html(String title, String intro, Path json) {
        HtmlReport page = new HtmlReport(title, intro);
        if (!findings.isEmpty()) {
            page.heading("Findings");
            findings.forEach(page::paragraph);
        }
        page.heading("Measurements");
        page.table(Measurement.headers(), measurements.stream().map(Measurement::row).toList());
        page.paragraph("goodput: predictions (not default outputs) answered within the SLO; open-loop latency "
                + "counts from each request's intended send time; mean batch is from the gateway's own metrics.");
        page.conditions(startedAt, environment);
        page.settings(settings);
        page.link(json, "all numbers (JSON)");
        for (Map<String, Object> g : gateways) {
            page.paragraph("gateway: " + g.get("command") + "; log " + g.get("log") + " ("
                    + g.get("logProblemLines") + " ERROR/WARN/exception lines)");
        }
        return page;
    }

    /** The measurements as a fixed-width table for the terminal. */
    public String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%-26s %9s %9s %9s %9s %9s %8s %9s %9s %7s%n", "setting", "offered/s",
                "sent/s", "answers/s", "goodput/s", "defaults", "errors", "p50 ms", "p99 ms", "batch"));
        for (Measurement m : measurements) {
            sb.append(String.format(Locale.ROOT, "%-26s %9s %9.1f %9.1f %9.1f %9d %8d %9s %9s %7s%n", m.label(),
                    m.offeredRate() == null ? "closed" : String.format(Locale.ROOT, "%.0f", m.offeredRate()),
                    m.sentPerSec(), m.answeredPerSec(), m.goodputPerSec(), m.defaults(), m.errors() + m.unanswered(),
                    HtmlReport.format(m.latency() == null ? null : m.latency().p50Ms()),
                    HtmlReport.format(m.p99Ms()),
                    HtmlReport.format(m.gatewaySide() == null ? null : m.gatewaySide().meanBatchSize())));
        }
        findings.forEach(f -> sb.append(f).append('\n'));
        return sb.toString();
    }
}

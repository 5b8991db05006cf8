package io.servegate.workload.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A self-contained HTML page for one load-generator scenario or simulator run: what ran and under
 * which conditions (cores, load average, date, JVM), tables of numbers and the run's PNG plots
 * (files beside the page). Built top to bottom; {@link #write} saves it.
 */
public final class HtmlReport {

    private final StringBuilder body = new StringBuilder();
    private final String title;

    /** Starts a page with a title and a sentence on what the scenario measures. */
    public HtmlReport(String title, String intro) {
        this.title = title;
        body.append("<h1>").append(escape(title)).append("</h1>\n");
        paragraph(intro);
    }

    /** The run conditions: date, machine, JVM, load average (from a report's environment map). */
    public HtmlReport conditions(String startedAt, Map<String, Object> environment) {
        body.append("<h2>Run conditions</h2>\n<table>\n");
        row("date (UTC)", startedAt);
        environment.forEach((k, v) -> row(k, v));
        body.append("</table>\n");
        return this;
    }

    /** The scenario's settings. */
    public HtmlReport settings(Map<String, Object> settings) {
        body.append("<h2>Settings</h2>\n<table>\n");
        settings.forEach(this::row);
        body.append("</table>\n");
        return this;
    }

    /** A two-column table of a map. */
    public HtmlReport keyValues(Map<?, ?> values) {
        body.append("<table>\n");
        values.forEach((k, v) -> row(String.valueOf(k), v));
        body.append("</table>\n");
        return this;
    }

    public HtmlReport heading(String text) {
        body.append("<h2>").append(escape(text)).append("</h2>\n");
        return this;
    }

    public HtmlReport paragraph(String text) {
        body.append("<p>").append(escape(text)).append("</p>\n");
        return this;
    }

    /** A table; numbers are printed with up to 3 decimals, null as "-". */
    public HtmlReport table(List<String> headers, List<List<Object>> rows) {
        body.append("<table>\n<tr>");
        for (String h : headers) {
            body.append("<th>").append(escape(h)).append("</th>");
        }
        body.append("</tr>\n");
        for (List<Object> r : rows) {
            body.append("<tr>");
            for (Object cell : r) {
                body.append(cell instanceof Number ? "<td class=\"n\">" : "<td>").append(escape(format(cell)))
                        .append("</td>");
            }
            body.append("</tr>\n");
        }
        body.append("</table>\n");
        return this;
    }

    /** A plot saved beside the page. */
    public HtmlReport image(Path png, String alt) {
        body.append("<p><img src=\"").append(escape(png.getFileName().toString())).append("\" alt=\"")
                .append(escape(alt)).append("\"></p>\n");
        return this;
    }

    /** A link to a file beside the page (the JSON, a log). */
    public HtmlReport link(Path file, String text) {
        body.append("<p><a href=\"").append(escape(file.getFileName().toString())).append("\">").append(escape(text))
                .append("</a></p>\n");
        return this;
    }

    /** Writes the page to {@code file}. */
    public Path write(Path file) throws IOException {
        String page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + escape(title)
                + "</title>\n<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;}"
                + "table{border-collapse:collapse;margin:1em 0;}td,th{border:1px solid #bbb;padding:3px 8px;}"
                + "th{background:#eee;}td.n{text-align:right;font-family:monospace;}img{max-width:100%;}</style>\n"
                + "</head>\n<body>\n" + body + "</body>\n</html>\n";
        Files.writeString(file, page, StandardCharsets.UTF_8);
        return file;
    }

    private void row(String key, Object value) {
        body.append("<tr><th>").append(escape(key)).append("</th><td>").append(escape(format(value)))
                .append("</td></tr>\n");
    }

    /** A cell as printed: numbers with up to 3 decimals, null and NaN as "-". */
    public static String format(Object v) {
        if (v == null) {
            return "-";
        }
        if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d)) {
                return "-";
            }
            return d == Math.rint(d) && Math.abs(d) < 1e15 ? String.valueOf((long) d)
                    : String.format(Locale.ROOT, "%.3f", d);
        }
        return String.valueOf(v);
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}

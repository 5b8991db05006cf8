package io.servegate.sim;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A self-contained HTML page in the load generator's report format (same layout and style):
 * title, what ran, tables, the PNG plots beside it and a link to the JSON.
 */
final class HtmlPage {

    private final StringBuilder body = new StringBuilder();
    private final String title;

    HtmlPage(String title, String intro) {
        this.title = title;
        body.append("<h1>").append(escape(title)).append("</h1>\n");
        paragraph(intro);
    }

    HtmlPage heading(String text) {
        body.append("<h2>").append(escape(text)).append("</h2>\n");
        return this;
    }

    HtmlPage paragraph(String text) {
        body.append("<p>").append(escape(text)).append("</p>\n");
        return this;
    }

    /** A two-column table of a map. */
    HtmlPage keyValues(Map<?, ?> values) {
        body.append("<table>\n");
        values.forEach((k, v) -> body.append("<tr><th>").append(escape(String.valueOf(k))).append("</th><td>")
                .append(escape(format(v))).append("</td></tr>\n"));
        body.append("</table>\n");
        return this;
    }

    HtmlPage table(List<String> headers, List<List<Object>> rows) {
        body.append("<table>\n<tr>");
        headers.forEach(h -> body.append("<th>").append(escape(h)).append("</th>"));
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

    HtmlPage image(Path png, String alt) {
        body.append("<p><img src=\"").append(escape(png.getFileName().toString())).append("\" alt=\"")
                .append(escape(alt)).append("\"></p>\n");
        return this;
    }

    HtmlPage link(Path file, String text) {
        body.append("<p><a href=\"").append(escape(file.getFileName().toString())).append("\">").append(escape(text))
                .append("</a></p>\n");
        return this;
    }

    Path write(Path file) throws IOException {
        String page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + escape(title)
                + "</title>\n<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;}"
                + "table{border-collapse:collapse;margin:1em 0;}td,th{border:1px solid #bbb;padding:3px 8px;}"
                + "th{background:#eee;}td.n{text-align:right;font-family:monospace;}img{max-width:100%;}</style>\n"
                + "</head>\n<body>\n" + body + "</body>\n</html>\n";
        Files.writeString(file, page, StandardCharsets.UTF_8);
        return file;
    }

    static String format(Object v) {
        if (v == null) {
            return "-";
        }
        if (v instanceof Double d) {
            return d == Math.rint(d) && Math.abs(d) < 1e15 ? String.valueOf(d.longValue())
                    : String.format(Locale.ROOT, "%.3f", d);
        }
        return String.valueOf(v);
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}

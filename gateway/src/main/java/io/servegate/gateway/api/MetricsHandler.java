package io.servegate.gateway.api;

import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.servegate.gateway.metrics.ClipperMetrics;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Supplier;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * {@code GET /metrics}: Clipper's metrics JSON (see {@link ClipperMetrics}) by default, and the
 * Prometheus exposition formats (text 0.0.4, OpenMetrics, protobuf) when the {@code Accept}
 * header prefers one of them, as Prometheus' scrapers do. The client's most preferred media
 * range that either side matches decides: {@code *}{@code /*}, {@code application/json} and no
 * header at all mean JSON; a header that matches neither gets 406.
 */
public final class MetricsHandler {

    private static final List<MediaType> PROMETHEUS_TYPES = List.of(MediaType.TEXT_PLAIN,
            MediaType.parseMediaType("application/openmetrics-text"),
            MediaType.parseMediaType("application/vnd.google.protobuf"));

    private final ClipperMetrics clipper;
    private final Supplier<PrometheusRegistry> prometheus;
    private final ExpositionFormats formats = ExpositionFormats.init();

    /**
     * @param clipper the JSON report
     * @param prometheus the registry Prometheus formats are written from (the one {@code
     *     /actuator/prometheus} serves), looked up when first asked for
     */
    public MetricsHandler(ClipperMetrics clipper, Supplier<PrometheusRegistry> prometheus) {
        this.clipper = clipper;
        this.prometheus = prometheus;
    }

    public Mono<ServerResponse> metrics(ServerRequest request) {
        Format format = negotiate(request.headers().accept());
        if (format == null) {
            return Errors.json(HttpStatus.NOT_ACCEPTABLE, "not acceptable", "GET /metrics answers application/json "
                    + "(Clipper's metrics), text/plain, application/openmetrics-text or Prometheus protobuf; the "
                    + "Accept header allows none of them");
        }
        if (format == Format.CLIPPER_JSON) {
            return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).header(HttpHeaders.VARY,
                    HttpHeaders.ACCEPT).bodyValue(clipper.report());
        }
        // the Prometheus client picks the writer from the raw header, as its own HTTP exporter does
        ExpositionFormatWriter writer = formats.findWriter(String.join(",", request.headers().header(
                HttpHeaders.ACCEPT)));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            writer.write(out, prometheus.get().scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return ServerResponse.ok().contentType(MediaType.parseMediaType(writer.getContentType()))
                .header(HttpHeaders.VARY, HttpHeaders.ACCEPT).bodyValue(out.toByteArray());
    }

    /** What {@code GET /metrics} can answer. */
    enum Format { CLIPPER_JSON, PROMETHEUS }

    /** The format the client prefers, or null when it accepts neither. */
    static Format negotiate(List<MediaType> accept) {
        if (accept.isEmpty()) {
            return Format.CLIPPER_JSON;
        }
        List<MediaType> byPreference = new ArrayList<>(accept);
        // a stable sort: ranges of equal quality keep the client's order
        byPreference.sort(Comparator.comparingDouble(MediaType::getQualityValue).reversed());
        for (MediaType range : byPreference) {
            if (range.getQualityValue() == 0) {
                continue;
            }
            if (range.includes(MediaType.APPLICATION_JSON)) {
                return Format.CLIPPER_JSON;
            }
            if (PROMETHEUS_TYPES.stream().anyMatch(range::includes)) {
                return Format.PROMETHEUS;
            }
        }
        return null;
    }
}

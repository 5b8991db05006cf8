package io.servegate.gateway.api;

import io.servegate.gateway.containers.ContainerManagerException;
import io.servegate.gateway.registry.RegistryException;
import io.servegate.gateway.registry.RegistryUnavailableException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;
import reactor.netty.channel.AbortedException;
import tools.jackson.databind.exc.JsonNodeException;

/**
 * Maps every failure to a JSON body with the right status; nothing leaks a stack trace. The
 * Clipper and admin APIs answer {@code {"error": <kind>, "cause": <reason>}}; the Open Inference
 * Protocol's endpoints ({@code /v2}...) answer the protocol's {@code {"error": <reason>}}, which is
 * all its clients show.
 */
public final class Errors {

    private static final Logger LOG = LoggerFactory.getLogger(Errors.class);

    /** How an error body looks. */
    public enum Shape {
        /** {@code {"error": <kind>, "cause": <reason>}}. */
        CLIPPER,
        /** {@code {"error": <reason>}}, the Open Inference Protocol's. */
        OIP;

        /** On the query port: OIP for the protocol's REST paths ({@code /v2} and below), CLIPPER for every other. */
        public static Shape forPath(String path) {
            return path.equals("/v2") || path.startsWith("/v2/") ? OIP : CLIPPER;
        }
    }

    private Errors() {
    }

    /** A router filter applying {@link #toResponse} to whatever a handler fails with. */
    public static HandlerFilterFunction<ServerResponse, ServerResponse> filter() {
        return filter(path -> Shape.CLIPPER);
    }

    /** The same, shaping each error by its request's path, e.g. with {@link Shape#forPath}. */
    public static HandlerFilterFunction<ServerResponse, ServerResponse> filter(Function<String, Shape> shapes) {
        // deferred: a handler that throws before returning its Mono (e.g. on a malformed
        // Content-Type) must get the same JSON answer as one whose Mono fails
        return (request, next) -> Mono.defer(() -> next.handle(request))
                .onErrorResume(t -> toResponse(t, shapes.apply(request.path())));
    }

    public static Mono<ServerResponse> toResponse(Throwable t) {
        return toResponse(t, Shape.CLIPPER);
    }

    public static Mono<ServerResponse> toResponse(Throwable t, Shape shape) {
        HttpStatusCode status;
        String error;
        String cause = t.getMessage();
        if (t instanceof ApiException e) {
            status = e.status();
            error = e.error();
        } else if (t instanceof RegistryException e) {
            status = switch (e.kind()) {
                case NOT_FOUND -> HttpStatus.NOT_FOUND;
                case CONFLICT -> HttpStatus.CONFLICT;
                case INVALID -> HttpStatus.BAD_REQUEST;
            };
            error = e.kind() == RegistryException.Kind.CONFLICT ? "conflict"
                    : e.kind() == RegistryException.Kind.NOT_FOUND ? "not found" : "bad request";
        } else if (t instanceof ContainerManagerException e) {
            status = switch (e.kind()) {
                case NOT_FOUND -> HttpStatus.NOT_FOUND;
                case CONFLICT -> HttpStatus.CONFLICT;
                case INVALID -> HttpStatus.BAD_REQUEST;
                case PLATFORM -> HttpStatus.BAD_GATEWAY;
            };
            error = switch (e.kind()) {
                case NOT_FOUND -> "not found";
                case CONFLICT -> "conflict";
                case INVALID -> "bad request";
                case PLATFORM -> "container platform error";
            };
        } else if (t instanceof RegistryUnavailableException) {
            status = HttpStatus.SERVICE_UNAVAILABLE;
            error = "registry unavailable";
        } else if (t instanceof io.servegate.gateway.query.OverloadRejectedException) {
            // the queues drain within about one SLO: a second is a polite, coarse back-off
            return retryLater(HttpStatus.SERVICE_UNAVAILABLE, 1, "overloaded", cause, shape);
        } else if (t instanceof DataBufferLimitException) {
            status = HttpStatus.PAYLOAD_TOO_LARGE;
            error = "request body too large";
        } else if (QuotesRequestHeader.of(t)) {
            // their messages quote a request header whole (a 6 KB Content-Type came back)
            status = HttpStatus.BAD_REQUEST;
            error = "bad request";
            cause = QuotesRequestHeader.CAUSE;
        } else if (t instanceof IllegalArgumentException) {
            status = HttpStatus.BAD_REQUEST;
            error = "bad request";
        } else if (t instanceof JsonNodeException) {
            // a field's value that Jackson cannot convert (an integer beyond every number type)
            status = HttpStatus.BAD_REQUEST;
            error = "bad request";
            cause = "a value in the request is out of range or of the wrong type";
        } else if (t instanceof ResponseStatusException e) {
            status = e.getStatusCode();
            HttpStatus known = HttpStatus.resolve(status.value());
            error = known != null ? known.getReasonPhrase().toLowerCase(java.util.Locale.ROOT) : "error";
            // the framework's reasons quote the request back (its URL with the Host header, its Content-Type)
            cause = status.value() == HttpStatus.UNSUPPORTED_MEDIA_TYPE.value()
                    ? "the body must be JSON (Content-Type: application/json)" : error;
        } else if (t instanceof AbortedException) {
            // the client closed the connection: no one to answer, nothing to log
            status = HttpStatus.BAD_REQUEST;
            error = "connection closed";
        } else {
            LOG.error("unexpected failure", t);
            status = HttpStatus.INTERNAL_SERVER_ERROR;
            error = "internal error";
            cause = t.getClass().getSimpleName();
        }
        return ServerResponse.status(status).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body(error, cause, shape));
    }

    public static Mono<ServerResponse> json(HttpStatusCode status, String error, String cause) {
        return json(status, error, cause, Shape.CLIPPER);
    }

    public static Mono<ServerResponse> json(HttpStatusCode status, String error, String cause, Shape shape) {
        return ServerResponse.status(status).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body(error, cause, shape));
    }

    /** An error that asks the client to come back in {@code seconds} ({@code Retry-After}). */
    static Mono<ServerResponse> retryLater(HttpStatusCode status, long seconds, String error, String cause,
            Shape shape) {
        return ServerResponse.status(status).header(HttpHeaders.RETRY_AFTER, Long.toString(seconds))
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body(error, cause, shape));
    }

    /** The body of an error of kind {@code error} for {@code cause}, in {@code shape}. */
    static Map<String, Object> body(String error, String cause, Shape shape) {
        Map<String, Object> body = new LinkedHashMap<>();
        if (shape == Shape.OIP) {
            body.put("error", cause == null ? error : cause);
        } else {
            body.put("error", error);
            body.put("cause", cause == null ? error : cause);
        }
        return body;
    }
}

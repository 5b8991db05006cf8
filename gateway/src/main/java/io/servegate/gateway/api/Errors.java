package io.servegate.gateway.api;

import io.servegate.gateway.containers.ContainerManagerException;
import io.servegate.gateway.registry.RegistryException;
import io.servegate.gateway.registry.RegistryUnavailableException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;

/** Maps every failure to {@code {"error", "cause"}} with the right status; nothing leaks a stack trace. */
public final class Errors {

    private static final Logger LOG = LoggerFactory.getLogger(Errors.class);

    private Errors() {
    }

    /** A router filter applying {@link #toResponse} to whatever a handler fails with. */
    public static HandlerFilterFunction<ServerResponse, ServerResponse> filter() {
        return (request, next) -> next.handle(request).onErrorResume(Errors::toResponse);
    }

    public static Mono<ServerResponse> toResponse(Throwable t) {
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
        } else if (t instanceof DataBufferLimitException) {
            status = HttpStatus.PAYLOAD_TOO_LARGE;
            error = "request body too large";
        } else if (t instanceof IllegalArgumentException) {
            status = HttpStatus.BAD_REQUEST;
            error = "bad request";
        } else if (t instanceof ResponseStatusException e) {
            status = e.getStatusCode();
            HttpStatus known = HttpStatus.resolve(status.value());
            error = known != null ? known.getReasonPhrase().toLowerCase(java.util.Locale.ROOT) : "error";
            cause = e.getReason() != null ? e.getReason() : e.getMessage();
        } else {
            LOG.error("unexpected failure", t);
            status = HttpStatus.INTERNAL_SERVER_ERROR;
            error = "internal error";
            cause = t.getClass().getSimpleName();
        }
        return json(status, error, cause);
    }

    public static Mono<ServerResponse> json(HttpStatusCode status, String error, String cause) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        body.put("cause", cause == null ? error : cause);
        return ServerResponse.status(status).contentType(MediaType.APPLICATION_JSON).bodyValue(body);
    }
}

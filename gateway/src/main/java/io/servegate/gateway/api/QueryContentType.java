package io.servegate.gateway.api;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;

/**
 * How a query's body is read, by its {@code Content-Type}: JSON (also when sent as text, as a
 * form by {@code curl -d}, or with no type at all, as Clipper's clients do), or raw bytes. Error
 * bodies do not quote the header back.
 */
enum QueryContentType {
    JSON,
    /** {@code application/octet-stream}: the whole body is one input. */
    RAW;

    /**
     * The body's kind.
     *
     * @throws ApiException 415 for a type that is neither, naming the accepted ones
     */
    static QueryContentType of(ServerRequest request) {
        String header = request.headers().firstHeader(HttpHeaders.CONTENT_TYPE);
        if (header == null || header.isBlank()) {
            return JSON;
        }
        MediaType type;
        try {
            type = MediaType.parseMediaType(header);
        } catch (InvalidMediaTypeException e) {
            return JSON; // the body reader answers an unreadable type as it always has
        }
        if (MediaType.APPLICATION_OCTET_STREAM.equalsTypeAndSubtype(type)) {
            return RAW;
        }
        if (type.isWildcardType() || type.isCompatibleWith(MediaType.APPLICATION_JSON)
                || type.getSubtype().endsWith("+json") || type.isCompatibleWith(MediaType.TEXT_PLAIN)
                || type.isCompatibleWith(MediaType.APPLICATION_FORM_URLENCODED)) {
            return JSON;
        }
        throw new ApiException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "unsupported media type",
                "a query body is JSON (Content-Type: application/json), or for apps of input type 'bytes' one raw "
                        + "input (Content-Type: application/octet-stream); the request's Content-Type is neither");
    }

    /**
     * The answer to a body that is not JSON, sent to an app of input type {@code bytes}: when the
     * request did not say it is JSON (no type, a form as {@code curl --data-binary} sends by
     * default, text), it most likely is raw bytes sent without their type, so the answer (415)
     * says how to send them; when it did say JSON, {@code malformed} stands. The type is named by
     * its kind, never quoted back.
     */
    static ApiException notJsonForBytesApp(ServerRequest request, ApiException malformed) {
        String header = request.headers().firstHeader(HttpHeaders.CONTENT_TYPE);
        String sent;
        if (header == null || header.isBlank()) {
            sent = "with no Content-Type";
        } else {
            MediaType type;
            try {
                type = MediaType.parseMediaType(header);
            } catch (InvalidMediaTypeException e) {
                type = null;
            }
            if (type != null && !type.isWildcardType() && (type.isCompatibleWith(MediaType.APPLICATION_JSON)
                    || type.getSubtype().endsWith("+json"))) {
                return malformed;
            }
            sent = type == null ? "with a Content-Type that is not a media type"
                    : type.isCompatibleWith(MediaType.APPLICATION_FORM_URLENCODED)
                            ? "as a form (application/x-www-form-urlencoded, what curl -d and --data-binary send "
                                    + "when no type is given)"
                            : type.isCompatibleWith(MediaType.TEXT_PLAIN) ? "as text/plain" : "as any type (*/*)";
        }
        return new ApiException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "unsupported media type", "the body is not "
                + "JSON and came " + sent + "; this app takes input type 'bytes': send the raw bytes with "
                + "Content-Type: application/octet-stream (curl -H 'Content-Type: application/octet-stream' "
                + "--data-binary @file), or JSON {\"input\": \"<base64>\"}");
    }
}

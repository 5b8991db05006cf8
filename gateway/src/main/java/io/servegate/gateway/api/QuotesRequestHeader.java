package io.servegate.gateway.api;

import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.UnsupportedCharsetException;
import org.springframework.util.InvalidMimeTypeException;

/**
 * Failures whose messages quote a request header ({@code Content-Type}, {@code Accept}) whole:
 * an unparsable media type, an unknown or malformed charset. Their answers name the headers,
 * never their values, so no error body repeats what a client sent in a header.
 */
final class QuotesRequestHeader {

    static final String CAUSE = "the Content-Type or Accept header is not a media type (with a known charset) "
            + "that this gateway reads: send Content-Type: application/json";

    private QuotesRequestHeader() {
    }

    /** Whether {@code t} (Spring's {@code InvalidMediaTypeException} included) is such a failure. */
    static boolean of(Throwable t) {
        return t instanceof InvalidMimeTypeException || t instanceof org.springframework.http.InvalidMediaTypeException
                || t instanceof IllegalCharsetNameException || t instanceof UnsupportedCharsetException;
    }
}

package io.servegate.gateway.api;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

/**
 * {@code Authorization: Bearer <token>} checking for the admin API and the metrics endpoints.
 * With no token configured every request passes. A missing or wrong token gets 401 with a
 * {@code WWW-Authenticate} challenge and the usual {@code {"error", "cause"}} body. Tokens are
 * compared in constant time (over their SHA-256 digests, so not even the length leaks).
 */
public final class BearerAuth {

    private final byte[] expectedDigest;
    private final String realm;

    private BearerAuth(String token, String realm) {
        this.expectedDigest = token.isEmpty() ? null : sha256(token);
        this.realm = realm;
    }

    /**
     * @param token the token; empty = no authentication
     * @param realm named in the challenge, e.g. {@code servegate-admin}
     */
    public static BearerAuth of(String token, String realm) {
        return new BearerAuth(token, realm);
    }

    /**
     * The configured token: {@code token} if set, else the trimmed contents of {@code tokenFile}
     * if set, else empty.
     *
     * @throws IllegalStateException naming {@code property} if the file cannot be read or is empty
     */
    public static String resolve(String token, String tokenFile, String property) {
        if (!token.isEmpty() || tokenFile.isEmpty()) {
            return token.strip();
        }
        try {
            String fromFile = Files.readString(Path.of(tokenFile), StandardCharsets.UTF_8).strip();
            if (fromFile.isEmpty()) {
                throw new IllegalStateException(property + "-file " + tokenFile + " is empty");
            }
            return fromFile;
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + property + "-file " + tokenFile + ": " + e, e);
        }
    }

    /**
     * Refuses an admin API reachable from other machines without a token.
     *
     * @throws IllegalStateException if {@code address} is not a loopback address and {@code token} is empty
     */
    public static void requireLoopbackOrToken(String address, String token) {
        if (!token.isEmpty()) {
            return;
        }
        boolean loopback;
        try {
            loopback = InetAddress.getByName(address).isLoopbackAddress();
        } catch (UnknownHostException e) {
            loopback = false;
        }
        if (!loopback) {
            throw new IllegalStateException("servegate.admin.address=" + address + " is not a loopback address "
                    + "and no servegate.admin.token (or token-file) is set: anyone who can reach it could change "
                    + "what is deployed. Set a token or bind the admin API to 127.0.0.1.");
        }
    }

    public boolean enabled() {
        return expectedDigest != null;
    }

    /**
     * Whether {@code authorization} carries this token; never when no token is configured (for
     * what only a token holder may ask, such as debug information).
     */
    public boolean accepts(String authorization) {
        return enabled() && problem(authorization) == null;
    }

    /**
     * Checks an {@code Authorization} value (an HTTP header, or gRPC metadata of the same name).
     *
     * @return null if it carries the token (or none is configured), else why not: {@code missing},
     *     {@code malformed} or {@code invalid}
     */
    public String problem(String authorization) {
        if (expectedDigest == null) {
            return null;
        }
        if (authorization == null) {
            return "missing";
        }
        if (authorization.length() < 7 || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return "malformed";
        }
        return MessageDigest.isEqual(expectedDigest, sha256(authorization.substring(7).strip())) ? null : "invalid";
    }

    /** A router filter for the admin API's routes. */
    public HandlerFilterFunction<ServerResponse, ServerResponse> filter() {
        return (request, next) -> {
            String problem = problem(request.headers().firstHeader(HttpHeaders.AUTHORIZATION));
            if (problem == null) {
                return next.handle(request);
            }
            return ServerResponse.status(HttpStatus.UNAUTHORIZED).contentType(MediaType.APPLICATION_JSON)
                    .header(HttpHeaders.WWW_AUTHENTICATE, challenge(problem))
                    .bodyValue(Map.of("error", "unauthorized", "cause", cause(problem)));
        };
    }

    /**
     * A web filter guarding the query port's paths that {@code guarded} accepts. The predicate
     * sees the path as routing matches it (segments percent-decoded, {@code ;params} dropped,
     * empty segments skipped) and lower-cased, so {@code /Metrics;x} or {@code //%6Detrics} cannot
     * slip past a check that a router would still match.
     */
    public WebFilter webFilter(Predicate<String> guarded) {
        return (exchange, chain) -> {
            if (!enabled() || !guarded.test(normalized(exchange.getRequest().getPath().pathWithinApplication()))) {
                return chain.filter(exchange);
            }
            String problem = problem(exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION));
            return problem == null ? chain.filter(exchange) : reject(exchange, problem);
        };
    }

    private static String normalized(PathContainer path) {
        StringBuilder sb = new StringBuilder();
        for (PathContainer.Element e : path.elements()) {
            if (e instanceof PathContainer.PathSegment segment && !segment.valueToMatch().isEmpty()) {
                sb.append('/').append(segment.valueToMatch().toLowerCase(Locale.ROOT));
            }
        }
        return sb.isEmpty() ? "/" : sb.toString();
    }

    private Mono<Void> reject(ServerWebExchange exchange, String problem) {
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatus.UNAUTHORIZED);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        response.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, challenge(problem));
        byte[] body = ("{\"error\":\"unauthorized\",\"cause\":\"" + cause(problem) + "\"}")
                .getBytes(StandardCharsets.UTF_8);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    private String challenge(String problem) {
        return "missing".equals(problem) ? "Bearer realm=\"" + realm + "\""
                : "Bearer realm=\"" + realm + "\", error=\"invalid_token\"";
    }

    private static String cause(String problem) {
        return switch (problem) {
            case "missing" -> "this endpoint needs an 'Authorization: Bearer <token>' header";
            case "malformed" -> "the Authorization header must be 'Bearer <token>'";
            default -> "the bearer token is not the configured one";
        };
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

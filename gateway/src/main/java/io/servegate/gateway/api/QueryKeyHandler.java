package io.servegate.gateway.api;

import io.servegate.gateway.access.QueryKey;
import io.servegate.gateway.access.QueryKeys;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistrySnapshot;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * The admin API's query keys: {@code create_query_key} (the key is in this answer only),
 * {@code get_query_keys} (ids, quotas, creation times) and {@code revoke_query_key}.
 */
public final class QueryKeyHandler {

    private static final Logger log = LoggerFactory.getLogger(QueryKeyHandler.class);

    private final Registry registry;
    private final QueryKeys keys;
    private final JsonBodies bodies;

    public QueryKeyHandler(Registry registry, QueryKeys keys, JsonBodies bodies) {
        this.registry = registry;
        this.keys = keys;
        this.bodies = bodies;
    }

    /** {@code {app, rate_limit?}} → {@code {app, key_id, key}}. */
    public Mono<ServerResponse> create(ServerRequest request) {
        return bodies.object(request).flatMap(body -> {
            String app = existing(body);
            return keys.create(app, AdminRequests.rateLimit(body.get("rate_limit")))
                    .onErrorMap(IllegalStateException.class,
                            e -> new ApiException(HttpStatus.CONFLICT, "conflict", e.getMessage()))
                    .flatMap(created -> {
                        log.info("query key {} created for '{}'", created.id(), app);
                        Map<String, Object> out = new LinkedHashMap<>();
                        out.put("app", app);
                        out.put("key_id", created.id());
                        out.put("key", created.key());
                        return bodies.respond(HttpStatus.OK, out);
                    });
        });
    }

    /** {@code {app}} → {@code {app, keys: [{key_id, created, rate_limit}]}}. */
    public Mono<ServerResponse> list(ServerRequest request) {
        return bodies.object(request).flatMap(body -> {
            String app = existing(body);
            return keys.list(app).flatMap(list -> bodies.respond(HttpStatus.OK, Map.of("app", app,
                    "keys", list.stream().map(QueryKeyHandler::view).toList())));
        });
    }

    /** {@code {app, key_id}} → {@code {app, key_id, revoked: true}}; 404 for no such key. */
    public Mono<ServerResponse> revoke(ServerRequest request) {
        return bodies.object(request).flatMap(body -> {
            String app = existing(body);
            String id = JsonBodies.requiredString(body, "key_id");
            return keys.revoke(app, id).flatMap(revoked -> {
                if (!revoked) {
                    return Mono.error(ApiException.notFound("app '" + app + "' has no query key '"
                            + io.servegate.gateway.registry.Names.brief(id, 64) + "'"));
                }
                log.info("query key {} of '{}' revoked", id, app);
                return bodies.respond(HttpStatus.OK, Map.of("app", app, "key_id", id, "revoked", true));
            });
        });
    }

    private String existing(JsonNode body) {
        String app = JsonBodies.requiredString(body, "app");
        RegistrySnapshot s = registry.snapshot();
        if (s.app(app).isEmpty() && s.pipeline(app).isEmpty()) {
            throw ApiException.notFound("unknown application '" + io.servegate.gateway.registry.Names.brief(app, 128)
                    + "'");
        }
        return app;
    }

    private static Map<String, Object> view(QueryKey k) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("key_id", k.id());
        m.put("created", Instant.ofEpochMilli(k.createdMillis()).toString());
        m.put("rate_limit", AdminViews.rateLimit(k.rateLimit()));
        return m;
    }
}

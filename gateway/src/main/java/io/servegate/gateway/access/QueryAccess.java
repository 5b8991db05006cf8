package io.servegate.gateway.access;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.Pipeline;
import io.servegate.gateway.registry.RateLimit;
import io.servegate.gateway.registry.RegistrySnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Decides whether a query may reach an app (or, over OIP, a model) by its query keys and
 * quotas. A name the registry does not know passes (the handler then answers as for any unknown
 * name), as does an app without keys or quota. Metrics and logs name a key by its id only.
 */
public final class QueryAccess {

    private static final Logger log = LoggerFactory.getLogger(QueryAccess.class);

    /** What becomes of a query. */
    public enum Outcome {
        /** Let through. */
        PASS,
        /** No valid key for a keyed app: 401 (gRPC UNAUTHENTICATED). */
        UNAUTHORIZED,
        /** Over the app's or the key's quota: the app's overload response. */
        LIMITED
    }

    /**
     * @param app             for LIMITED, the app whose quota refused; for PASS, the app whose key
     *                        let the query through (an OIP query is then scheduled as that app's
     *                        tenant); else null
     * @param retryAfterNanos for LIMITED, how long until a retry could pass
     * @param problem         for UNAUTHORIZED: {@code missing}, {@code malformed} or {@code invalid}
     */
    public record Verdict(Outcome outcome, Application app, long retryAfterNanos, String problem) {
        static final Verdict PASS = new Verdict(Outcome.PASS, null, 0, null);

        /** The tenant an OIP query let through by this verdict is scheduled as: its key's app's, else the default. */
        public Tenant tenant() {
            return outcome == Outcome.PASS && app != null ? app.tenant() : Tenant.DEFAULT;
        }
    }

    private final QueryKeys keys;
    private final QueryQuotas quotas;
    private final MeterRegistry meters;

    public QueryAccess(QueryKeys keys, QueryQuotas quotas, MeterRegistry meters) {
        this.keys = keys;
        this.quotas = quotas;
        this.meters = meters;
    }

    /** A query of app or pipeline {@code name} ({@code /{app}/predict}, {@code /{app}/update}). */
    public Mono<Verdict> app(RegistrySnapshot snapshot, String name, String authorization) {
        Application app = snapshot.app(name).orElse(null);
        if (app == null && snapshot.pipeline(name).isEmpty()) {
            return Mono.just(Verdict.PASS);
        }
        return keys.check(name, authorization).map(check -> decide(name, app, check));
    }

    /**
     * The verdict of {@link #app}, decided now (its key and quota counted) when it needs no wait:
     * the app's key list was read already, as for every query but its app's first few. Null
     * otherwise, and nothing is counted: then {@code app} waits for the read.
     */
    public Verdict appNow(RegistrySnapshot snapshot, String name, String authorization) {
        Application app = snapshot.app(name).orElse(null);
        if (app == null && snapshot.pipeline(name).isEmpty()) {
            return Verdict.PASS;
        }
        QueryKeys.Check check = keys.checkIfRead(name, authorization);
        return check == null ? null : decide(name, app, check);
    }

    /**
     * An OIP call to model {@code model}: when an app (or pipeline) that reaches it holds keys,
     * the call needs a key of one of them, and spends that app's and key's quota.
     */
    public Mono<Verdict> model(RegistrySnapshot snapshot, String model, String authorization) {
        List<String> reaching = new ArrayList<>();
        for (Application a : snapshot.apps()) {
            if (a.linkedModels().contains(model)) {
                reaching.add(a.name());
            }
        }
        for (Pipeline p : snapshot.pipelines()) {
            if (p.stages().stream().anyMatch(s -> Objects.equals(s.model(), model))) {
                reaching.add(p.name());
            }
        }
        if (reaching.isEmpty()) {
            return Mono.just(Verdict.PASS);
        }
        return Flux.fromIterable(reaching)
                .concatMap(name -> keys.check(name, authorization).map(check -> new Named(name, check)))
                .collectList()
                .map(checks -> {
                    if (checks.stream().allMatch(c -> c.check().allowed() && c.check().key() == null)) {
                        return Verdict.PASS;
                    }
                    for (Named c : checks) {
                        if (c.check().allowed() && c.check().key() != null) {
                            return decide(c.name(), snapshot.app(c.name()).orElse(null), c.check());
                        }
                    }
                    String problem = checks.stream().map(c -> c.check().problem()).filter(Objects::nonNull)
                            .findFirst().orElse("invalid");
                    return unauthorized(model, problem);
                });
    }

    private record Named(String name, QueryKeys.Check check) {
    }

    private Verdict decide(String name, Application app, QueryKeys.Check check) {
        if (!check.allowed()) {
            return unauthorized(name, check.problem());
        }
        String keyId = check.key() == null ? null : check.key().id();
        if (keyId != null) {
            counter("servegate.query.key.queries", name, keyId).increment();
        }
        RateLimit appLimit = app == null ? null : app.rateLimit();
        RateLimit keyLimit = check.key() == null ? null : check.key().rateLimit();
        // a key names its app: the query is that app's, wherever it enters
        Verdict pass = keyId == null || app == null ? Verdict.PASS : new Verdict(Outcome.PASS, app, 0, null);
        if (appLimit == null && keyLimit == null) {
            return pass;
        }
        long wait = quotas.tryTake(name, appLimit, keyId, keyLimit);
        if (wait == 0) {
            return pass;
        }
        counter("servegate.quota.limited", name, keyId == null ? "" : keyId).increment();
        return new Verdict(Outcome.LIMITED, app, wait, null);
    }

    private Verdict unauthorized(String name, String problem) {
        Counter.builder("servegate.query.unauthorized").tag("name", name).tag("problem", problem)
                .description("queries refused for want of a valid query key").register(meters).increment();
        log.debug("query of '{}' refused: {} key", name, problem);
        return new Verdict(Outcome.UNAUTHORIZED, null, 0, problem);
    }

    private Counter counter(String metric, String app, String keyId) {
        return Counter.builder(metric).tag("app", app).tag("key_id", keyId).register(meters);
    }
}

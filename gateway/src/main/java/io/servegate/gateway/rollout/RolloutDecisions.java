package io.servegate.gateway.rollout;

import io.servegate.core.rollout.Decision;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutDecider;
import io.servegate.core.rollout.RolloutEvidence;
import io.servegate.core.rollout.RolloutStatus;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistrySnapshot;
import java.time.Duration;
import java.util.List;
import java.util.function.BiPredicate;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The rollouts' periodic work on every gateway: read the stored rollouts (routing follows them),
 * store this gateway's evidence for each running one, and, on the gateway that owns the
 * candidate version (the only one in a fleet; a solo gateway always), sum every gateway's
 * evidence, decide with {@link RolloutDecider} and store the decision. A promotion makes the
 * candidate the model's current version in the registry (as {@code set_model_version} does)
 * before it is stored; a rollback returns every query to the current version. Each decision is
 * one log line with its reason. A rollout whose model's current version was changed by hand, or
 * whose candidate was deleted, is aborted.
 */
public final class RolloutDecisions implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RolloutDecisions.class);

    private final RolloutStore store;
    private final RolloutTraffic traffic;
    private final RolloutCounters counters;
    private final Registry registry;
    private final BiPredicate<String, String> owns;
    private final String member;
    private final LongSupplier epochMillis;
    private final RolloutMeters meters;
    private volatile Disposable loop;

    /**
     * @param owns        whether this gateway decides for a model version (its owner in a fleet)
     * @param member      this gateway's name in the evidence it stores: unique per process, so a
     *                    restarted gateway adds to what its predecessor stored instead of replacing it
     * @param epochMillis the clock of decisions (epoch milliseconds)
     */
    public RolloutDecisions(RolloutStore store, RolloutTraffic traffic, RolloutCounters counters, Registry registry,
            BiPredicate<String, String> owns, String member, LongSupplier epochMillis, RolloutMeters meters) {
        this.store = store;
        this.traffic = traffic;
        this.counters = counters;
        this.registry = registry;
        this.owns = owns;
        this.member = member;
        this.epochMillis = epochMillis;
        this.meters = meters;
    }

    /** Reads the store once, blocking (startup), then works every {@code interval} on {@code scheduler}. */
    public RolloutDecisions start(Duration interval, Scheduler scheduler) {
        store.all().doOnNext(traffic::update).onErrorResume(e -> {
            log.warn("rollouts could not be read at startup: {}", e.toString());
            return Mono.empty();
        }).block(Duration.ofSeconds(10));
        loop = Flux.interval(interval, interval, scheduler)
                .onBackpressureDrop()
                .concatMap(t -> tick().onErrorResume(e -> {
                    log.warn("rollout decisions skipped this interval: {}", e.toString());
                    return Mono.empty();
                }), 1)
                .subscribe();
        return this;
    }

    /** One round: read, route, store evidence, decide where this gateway owns the candidate. */
    Mono<Void> tick() {
        return store.all().flatMap(all -> {
            traffic.update(all);
            counters.retain(all.stream().filter(r -> !r.status().isFinal()).map(Rollout::id).toList());
            all.forEach(meters::share);
            return Flux.fromIterable(all).filter(r -> !r.status().isFinal()).concatMap(this::step).then();
        });
    }

    private Mono<Void> step(Rollout r) {
        Mono<Void> publish = store.putEvidence(r.id(), member, counters.evidence(r.id()));
        if (!owns.test(r.model(), r.candidate())) {
            return publish;
        }
        String stale = stale(r, registry.snapshot());
        if (stale != null) {
            return publish.then(write(r, r.abort(epochMillis.getAsLong(), stale)));
        }
        return publish.then(store.evidence(r.id())).flatMap(e -> decide(r, e));
    }

    /** Why a rollout can no longer run against the registry, or null. */
    private static String stale(Rollout r, RegistrySnapshot s) {
        String current = s.currentVersion(r.model()).orElse(null);
        if (!r.baseline().equals(current)) {
            return "the model's current version is now " + (current == null ? "none" : "'" + current + "'")
                    + ", not the baseline '" + r.baseline() + "'";
        }
        return s.model(r.model(), r.candidate()).isEmpty() ? "the candidate version was deleted" : null;
    }

    private Mono<Void> decide(Rollout r, RolloutEvidence e) {
        meters.guards(r, RolloutDecider.guardValues(r, e), e);
        Rollout next = RolloutDecider.decide(r, e, epochMillis.getAsLong());
        if (next == r) {
            return Mono.empty();
        }
        Mono<Void> promote = next.status() == RolloutStatus.PROMOTED
                ? registry.setModelVersion(r.model(), r.candidate()) : Mono.empty();
        return promote.then(write(r, next));
    }

    private Mono<Void> write(Rollout r, Rollout next) {
        return store.replace(r.model(), r, next).doOnNext(stored -> {
            if (!stored) {
                log.info("rollout {} changed meanwhile; deciding again next interval", r.id());
                return;
            }
            Decision d = last(next.history());
            log.info("rollout {} of {}:{} against {}: {} {} -> {}: {}", r.id(), r.model(), r.candidate(),
                    r.baseline(), d.kind(), d.fromShare(), d.toShare(), d.reason());
            meters.decided(next, d);
            meters.share(next);
            traffic.update(next);
        }).then();
    }

    private static Decision last(List<Decision> history) {
        return history.get(history.size() - 1);
    }

    @Override
    public void close() {
        Disposable d = loop;
        if (d != null) {
            d.dispose();
        }
    }
}

package io.servegate.gateway.rollout;

import io.servegate.core.rollout.Decision;
import io.servegate.core.rollout.Guards;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutEvidence;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.core.rollout.RolloutStatus;
import io.servegate.core.selection.Task;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistryException;
import io.servegate.gateway.registry.RegistrySnapshot;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * The operator's side of rollouts: start one (validated against the registry), read one with
 * the evidence summed over the fleet, pause, resume or abort one. Every change is a
 * compare-and-set in the {@link RolloutStore}, retried on a fresh read when the deciding gateway
 * wrote meanwhile, and takes effect on this gateway's routing at once (on the others' within one
 * interval). Refusals are {@link RegistryException}s (400, 404, 409 on the admin API).
 */
public final class RolloutAdmin {

    private static final Logger log = LoggerFactory.getLogger(RolloutAdmin.class);
    private static final int ATTEMPTS = 5;

    private final RolloutStore store;
    private final RolloutTraffic traffic;
    private final Registry registry;
    private final LongSupplier epochMillis;

    public RolloutAdmin(RolloutStore store, RolloutTraffic traffic, Registry registry, LongSupplier epochMillis) {
        this.store = store;
        this.traffic = traffic;
        this.registry = registry;
        this.epochMillis = epochMillis;
    }

    /**
     * What an operator asks for: a canary or a shadow of {@code candidate} against the model's current version.
     *
     * @param steps the candidate's shares (a shadow's one fraction of queries copied); empty for
     *              {@link Rollout#DEFAULT_STEPS}
     */
    public record Request(String model, String candidate, RolloutMode mode, Task task, double scale, Guards guards,
            List<Double> steps) {
    }

    /** A rollout with the evidence its guards are evaluated on (summed over every gateway). */
    public record View(Rollout rollout, RolloutEvidence evidence) {
    }

    /**
     * Starts a rollout. {@code INVALID} for an unknown model or candidate version, a candidate
     * that is the current version, or steps or guards the rollout
     * refuses; {@code CONFLICT} while another rollout of the model runs or is paused.
     */
    public Mono<Rollout> start(Request q) {
        return Mono.defer(() -> {
            RegistrySnapshot s = registry.snapshot();
            String baseline = s.currentVersion(q.model()).orElseThrow(() -> RegistryException.invalid(
                    "model '" + q.model() + "' not found (or has no current version)"));
            if (s.model(q.model(), q.candidate()).isEmpty()) {
                throw RegistryException.invalid("model '" + q.model() + "' has no version '" + q.candidate() + "'");
            }
            if (q.candidate().equals(baseline)) {
                throw RegistryException.invalid("the candidate version '" + q.candidate()
                        + "' is already the current version of '" + q.model() + "'");
            }
            String id = q.model() + ":" + q.candidate() + ":" + UUID.randomUUID().toString().substring(0, 8);
            Rollout started;
            try {
                started = Rollout.start(id, q.model(), q.candidate(), baseline, q.mode(), q.task(), q.scale(),
                        q.guards(), q.steps().isEmpty() ? Rollout.DEFAULT_STEPS : q.steps(), epochMillis.getAsLong());
            } catch (IllegalArgumentException e) {
                throw RegistryException.invalid(e.getMessage());
            }
            return store.get(q.model()).map(Optional::of).defaultIfEmpty(Optional.empty())
                    .flatMap(old -> {
                        if (old.isPresent() && !old.get().status().isFinal()) {
                            throw RegistryException.conflict("rollout " + old.get().id() + " of '" + q.model()
                                    + "' is " + status(old.get()) + "; abort it first");
                        }
                        return store.replace(q.model(), old.orElse(null), started);
                    })
                    .flatMap(stored -> stored ? Mono.just(applied(started))
                            : Mono.error(RegistryException.conflict("another rollout of '" + q.model()
                                    + "' was started meanwhile")));
        });
    }

    /** The model's latest rollout with its evidence; {@code NOT_FOUND} if it never had one. */
    public Mono<View> get(String model) {
        return stored(model).flatMap(r -> store.evidence(r.id()).map(e -> new View(r, e)));
    }

    /** Pauses a running rollout: it keeps routing by its step but takes no decision. */
    public Mono<Rollout> pause(String model) {
        return change(model, RolloutStatus.RUNNING, r -> r.pause(epochMillis.getAsLong()));
    }

    /** Resumes a paused rollout; the step's clock and query count start again. */
    public Mono<Rollout> resume(String model) {
        return Mono.defer(() -> stored(model).flatMap(r -> store.evidence(r.id())))
                .flatMap(e -> change(model, RolloutStatus.PAUSED,
                        r -> r.resume(epochMillis.getAsLong(), e.candidate().queries())));
    }

    /** Aborts a running or paused rollout: every query goes to the current version again. */
    public Mono<Rollout> abort(String model) {
        return change(model, null, r -> r.abort(epochMillis.getAsLong(), "operator"));
    }

    /** Applies {@code op} to the stored rollout, which must be in {@code from} (null: any that is not final). */
    private Mono<Rollout> change(String model, RolloutStatus from, UnaryOperator<Rollout> op) {
        return Mono.defer(() -> stored(model)).flatMap(r -> {
            if (from != null ? r.status() != from : r.status().isFinal()) {
                return Mono.error(RegistryException.conflict("rollout " + r.id() + " of '" + model + "' is "
                        + status(r)));
            }
            Rollout next = op.apply(r);
            return store.replace(model, r, next).flatMap(stored -> stored ? Mono.just(applied(next))
                    : Mono.error(new LostRace()));
        }).retryWhen(Retry.max(ATTEMPTS - 1).filter(e -> e instanceof LostRace)
                        .onRetryExhaustedThrow((spec, signal) -> signal.failure()))
                .onErrorMap(LostRace.class, e -> RegistryException.conflict("rollout of '" + model
                        + "' kept changing; try again"));
    }

    private Mono<Rollout> stored(String model) {
        return store.get(model).switchIfEmpty(Mono.error(() -> RegistryException.notFound(
                "model '" + model + "' has no rollout")));
    }

    private Rollout applied(Rollout r) {
        traffic.update(r);
        Decision d = r.history().get(r.history().size() - 1);
        log.info("rollout {} of {}:{} against {}: {} {} -> {}: {}", r.id(), r.model(), r.candidate(), r.baseline(),
                d.kind(), d.fromShare(), d.toShare(), d.reason());
        return r;
    }

    private static String status(Rollout r) {
        return r.status().name().toLowerCase(java.util.Locale.ROOT);
    }

    /** A compare-and-set lost to another writer: read again and retry. */
    private static final class LostRace extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LostRace() {
            super(null, null, false, false);
        }
    }
}

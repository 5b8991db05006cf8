package io.servegate.gateway.selection;

import io.servegate.core.selection.Versioned;
import io.servegate.core.selection.WeightedPolicy;
import io.servegate.core.selection.WeightedStep;
import java.util.List;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * Where selection-policy states live (Clipper, NSDI'17, §5.3): one versioned, opaque byte array
 * per application and context, shared by every gateway instance that uses the same store.
 *
 * <p>Writes are optimistic: read a {@link Versioned} state, compute the new one in Java, and
 * {@link #compareAndSet} it against the version read; {@link #update} wraps that loop with
 * bounded, jittered retries so that concurrent feedback from several gateways is never lost.
 * The one exception is {@link #observe}: a {@link WeightedStep} does not depend on the state, so
 * a store may apply it where the state lives, in one atomic step.
 *
 * <p>Contexts: {@code null} or {@code ""} is the application-wide state; any other string is a
 * user, session or other context, stored separately (keys are escaped, so no context name can
 * clash with the application-wide one or with another application's).
 *
 * <p>Versions are opaque: a state is created with an unpredictable positive version and every
 * successful write increments it, so a state that expired and was created again does not reuse
 * the version a slow writer may still hold.
 */
public interface SelectionStateStore extends AutoCloseable {

    /**
     * @param app     the application, not blank
     * @param context the context; {@code null} or empty for the application-wide state
     * @return the state, or an empty {@link Mono} if there is none
     */
    Mono<Versioned> get(String app, String context);

    /**
     * Writes {@code state} if the stored version is still {@code expectedVersion}.
     *
     * @param app             the application, not blank
     * @param context         the context; {@code null} or empty for the application-wide state
     * @param expectedVersion the version last read, or {@code 0} to create an absent state
     * @param state           the new encoded state, not null
     * @return {@code true} if written, {@code false} if the stored version differed (including
     *         absent when {@code expectedVersion != 0}, or present when it is {@code 0})
     */
    Mono<Boolean> compareAndSet(String app, String context, long expectedVersion, byte[] state);

    /**
     * Read-modify-write with optimistic retry: reads the state, applies {@code fn}, and
     * compare-and-sets the result; on a conflict waits a random, exponentially growing delay (on
     * a timer, never blocking a thread; from 0.5 ms up to 20 ms) and retries, at most 100
     * attempts in all. {@code fn} must be a pure function: it may run once per attempt. It runs
     * on whichever thread completed the read (for Redis, a Lettuce I/O thread), so it must be
     * quick and must not block; decoding, one policy step and encoding are.
     *
     * @param app     the application, not blank
     * @param context the context; {@code null} or empty for the application-wide state
     * @param fn      old encoded state ({@code null} if absent) → new encoded state; returning
     *                {@code null} writes nothing and completes with the current state (empty if
     *                absent). An exception it throws fails the update without retrying.
     * @return the state written (or kept)
     * @throws SelectionStateConflictException (as the {@link Mono}'s error) if all attempts
     *                                         lost to concurrent writers
     */
    default Mono<byte[]> update(String app, String context, Function<byte[], byte[]> fn) {
        return OptimisticUpdate.run(this, app, context, fn, OptimisticUpdate.DEFAULT_MAX_ATTEMPTS,
                OptimisticUpdate.DEFAULT_BASE_BACKOFF, OptimisticUpdate.DEFAULT_MAX_BACKOFF);
    }

    /**
     * Applies one observation of a weighted policy (Exp3, Exp4): the state ({@code policy}'s
     * initial one over {@code models} when absent), brought up to date with
     * {@code policy.link(state, models)}, then {@code step.applyTo}. Atomic like {@link #update},
     * which the default runs; a store may apply the step server-side in one round trip instead,
     * with the same result.
     *
     * @param app     the application's state name, not blank
     * @param context the context; {@code null} or empty for the application-wide state
     * @param policy  the policy whose state this is (its codec, initial state and relinking)
     * @param models  the application's linked models, in link order
     * @param step    the observation, from {@link WeightedPolicy#step}
     * @return the state written
     */
    default Mono<byte[]> observe(String app, String context, WeightedPolicy policy, List<String> models,
            WeightedStep step) {
        return update(app, context, bytes -> policy.codec().encode(step.applyTo(
                policy.link(bytes == null ? policy.init(models) : policy.codec().decode(bytes), models))));
    }

    /**
     * How many per-context states this store (this gateway's instance of it) has evicted so far
     * to keep an application within its {@link StateBounds#maxStatesPerApp}; expiry is not
     * counted. The default: none.
     */
    default long evictions() {
        return 0;
    }

    /** Releases the store's resources; the default does nothing. */
    @Override
    default void close() {
    }
}

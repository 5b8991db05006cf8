package io.servegate.gateway.rollout;

import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutEvidence;
import java.util.List;
import reactor.core.publisher.Mono;

/**
 * Where rollouts are kept beside the registry (in memory, or in Redis for a fleet and for
 * restarts): one rollout per model, the latest started, with every gateway's evidence for it.
 * Every method is lazy and never blocks the subscribing thread; a store that cannot be reached
 * fails the {@link Mono}.
 */
public interface RolloutStore extends AutoCloseable {

    /** @return every stored rollout, one per model, running or final */
    Mono<List<Rollout>> all();

    /** @return the model's rollout, empty if it never had one */
    Mono<Rollout> get(String model);

    /**
     * Stores {@code next} as the model's rollout if the stored one is still {@code expected}
     * (null: none stored), so that an operator's call and the deciding gateway never overwrite
     * each other. Replacing a rollout by one of another id drops the old one's evidence.
     *
     * @return whether it was stored
     */
    Mono<Boolean> replace(String model, Rollout expected, Rollout next);

    /** Stores what one gateway ({@code member}) observed of a rollout so far, replacing its earlier figures. */
    Mono<Void> putEvidence(String rolloutId, String member, RolloutEvidence evidence);

    /** @return the sum of every gateway's stored evidence for a rollout */
    Mono<RolloutEvidence> evidence(String rolloutId);

    @Override
    void close();
}

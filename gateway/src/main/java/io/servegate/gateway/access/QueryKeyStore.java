package io.servegate.gateway.access;

import java.util.List;
import reactor.core.publisher.Mono;

/**
 * Where apps' query keys are kept ({@link QueryKey}: digests, never keys). Every method is lazy
 * and never blocks the subscribing thread; a store that cannot be reached fails the {@link Mono}.
 */
public interface QueryKeyStore extends AutoCloseable {

    /** Adds a key to an app's keys. */
    Mono<Void> add(String app, QueryKey key);

    /** Removes one key; {@code false} if the app had no key of that id. */
    Mono<Boolean> revoke(String app, String id);

    /** An app's keys, in no particular order; empty for an app without keys. */
    Mono<List<QueryKey>> keys(String app);

    /** Removes every key of an app (when the app is deleted, so that a new app of its name starts unkeyed). */
    Mono<Void> removeAll(String app);

    @Override
    void close();
}

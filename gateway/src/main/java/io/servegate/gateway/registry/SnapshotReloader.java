package io.servegate.gateway.registry;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Keeps {@link RedisRegistry}'s snapshot current: it reloads the whole state whenever it changed,
 * that is after a local write ({@link #reloadAfterNow}), on a change message
 * ({@link #onChangeMessage}) and when the poller, which reads the revision every poll interval
 * as a fallback for missed messages, sees a different revision. Reloads never block a caller's
 * thread, run one at a time and are applied in order on one daemon worker thread, which also
 * calls the listeners; while the store is unreachable the last snapshot keeps being served.
 */
final class SnapshotReloader implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SnapshotReloader.class);

    private final Supplier<Mono<List<Object>>> read;
    private final Function<List<Object>, StoredRegistry> parse;
    private final Supplier<Mono<String>> revision;
    private final Duration closeTimeout;
    private final ScheduledExecutorService worker;
    private final ScheduledFuture<?> pollTask;
    private final List<Consumer<RegistrySnapshot>> listeners = new CopyOnWriteArrayList<>();
    private volatile StoredRegistry stored;
    private volatile boolean closed;

    // Confined to the worker thread.
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private long reloadRequested;
    private long reloadDone;
    private boolean reloadInFlight;
    private boolean pollInFlight;
    private boolean storeDown;

    /** A write waiting for a reload that started after it committed. */
    private record Waiter(long seq, MonoSink<Void> sink) {
    }

    /**
     * Starts polling at once, so that a change announced before this reloader existed is caught.
     *
     * @param name         names the worker thread
     * @param initial      the state loaded at startup
     * @param read         reads the whole state
     * @param parse          parses what {@code read} returned (on the worker thread)
     * @param revision     reads the revision counter
     * @param pollInterval how often the revision is read
     * @param closeTimeout how long {@link #close()} waits for the worker
     */
    SnapshotReloader(String name, StoredRegistry initial, Supplier<Mono<List<Object>>> read,
            Function<List<Object>, StoredRegistry> parse, Supplier<Mono<String>> revision, Duration pollInterval,
            Duration closeTimeout) {
        this.stored = initial;
        this.read = read;
        this.parse = parse;
        this.revision = revision;
        this.closeTimeout = closeTimeout;
        this.worker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        long pollMillis = Math.max(1, pollInterval.toMillis());
        this.pollTask = worker.scheduleWithFixedDelay(this::poll, 0, pollMillis, TimeUnit.MILLISECONDS);
    }

    /** @return the latest state applied */
    StoredRegistry stored() {
        return stored;
    }

    void addListener(Consumer<RegistrySnapshot> listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /** @return a Mono completing once a reload that started after this call was applied */
    Mono<Void> reloadAfterNow() {
        return Mono.create(sink -> onWorker(() -> {
            if (closed) {
                sink.error(closedException());
                return;
            }
            waiters.add(new Waiter(++reloadRequested, sink));
            startReload();
        }, sink));
    }

    /** A change message: the revision a write committed. */
    void onChangeMessage(String message) {
        onWorker(() -> reloadUnlessAt(message), null);
    }

    /** Stops polling and the worker thread; writes still waiting for a reload fail. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        pollTask.cancel(false);
        try {
            worker.execute(this::failWaiters);
        } catch (RejectedExecutionException ignored) {
            // already shut down
        }
        worker.shutdown();
        try {
            worker.awaitTermination(closeTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static IllegalStateException closedException() {
        return new IllegalStateException("registry is closed");
    }

    // ---------------------------------------------------------------- worker thread

    private void poll() {
        if (pollInFlight || closed) {
            return;
        }
        pollInFlight = true;
        revision.get().defaultIfEmpty("0").subscribe(
                value -> onWorker(() -> {
                    pollInFlight = false;
                    if (storeDown) {
                        storeDown = false;
                        log.info("registry store reachable again");
                    }
                    reloadUnlessAt(value);
                }, null),
                error -> onWorker(() -> {
                    pollInFlight = false;
                    if (!storeDown) {
                        storeDown = true;
                        log.warn("registry store unreachable, serving snapshot revision {}: {}",
                                stored.snapshot().revision(), RedisRegistry.describe(error));
                    }
                }, null));
    }

    private void reloadUnlessAt(String revisionText) {
        long revision;
        try {
            revision = Long.parseLong(revisionText);
        } catch (NumberFormatException e) {
            revision = -1;
        }
        if (revision != stored.snapshot().revision()) {
            reloadRequested++;
            startReload();
        }
    }

    private void startReload() {
        if (reloadInFlight || reloadDone >= reloadRequested || closed) {
            return;
        }
        reloadInFlight = true;
        long target = reloadRequested;
        // the reply is parsed on the worker, not on Lettuce's event loop
        read.get().subscribe(
                reply -> onWorker(() -> reloadFinished(target, reply, null), null),
                e -> onWorker(() -> reloadFinished(target, null, e), null));
    }

    private void reloadFinished(long target, List<Object> reply, Throwable failure) {
        reloadInFlight = false;
        reloadDone = Math.max(reloadDone, target);
        Throwable error = failure;
        StoredRegistry loaded = null;
        if (reply != null) {
            try {
                loaded = parse.apply(reply);
            } catch (RuntimeException e) {
                error = e;
            }
        }
        if (loaded != null) {
            apply(loaded);
        } else {
            log.warn("registry reload failed, serving snapshot revision {}: {}", stored.snapshot().revision(),
                    RedisRegistry.describe(error));
        }
        while (!waiters.isEmpty() && waiters.peek().seq() <= target) {
            waiters.poll().sink().success();
        }
        startReload();
    }

    private void apply(StoredRegistry loaded) {
        if (loaded.snapshot().revision() == stored.snapshot().revision()) {
            return;
        }
        stored = loaded;
        for (Consumer<RegistrySnapshot> l : listeners) {
            try {
                l.accept(loaded.snapshot());
            } catch (RuntimeException e) {
                log.warn("registry listener {} failed", l, e);
            }
        }
    }

    private void failWaiters() {
        while (!waiters.isEmpty()) {
            waiters.poll().sink().error(closedException());
        }
    }

    private void onWorker(Runnable task, MonoSink<?> sink) {
        try {
            worker.execute(task);
        } catch (RejectedExecutionException e) {
            if (sink != null) {
                sink.error(closedException());
            }
        }
    }
}

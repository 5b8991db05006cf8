package io.servegate.sdk;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The models of a container that are loaded, within a memory budget: loads on first use or on
 * request, one at a time on a loader thread (Clockwork's single load path), and unloads the least
 * recently used models when a load would exceed the budget. Pinned models are never unloaded.
 *
 * <p>A model's bytes count against the budget from the moment its load starts until it is
 * unloaded; an unloaded model that still has batches in flight is closed when the last one ends.
 */
final class ResidentModels<X, Y> implements AutoCloseable {

    /** A model's state in RepositoryIndex, named as Triton names them. */
    enum State { READY, LOADING, UNAVAILABLE }

    /** One line of RepositoryIndex. */
    record IndexEntry(ModelKey model, State state, String reason) {
    }

    private static final Logger LOG = LoggerFactory.getLogger(ResidentModels.class);
    private static final int NAMES_IN_MESSAGES = 5;

    private final ModelRepository<X, Y> repository;
    private final long budgetBytes;
    private final Set<ModelKey> pinned;
    private final ExecutorService loader;

    // all guarded by this
    /** In order of last use: the first entry is the least recently used ({@link #touch} moves one to the end). */
    private final LinkedHashMap<ModelKey, Resident<X, Y>> resident = new LinkedHashMap<>();
    private final Map<ModelKey, CompletableFuture<Resident<X, Y>>> loading = new HashMap<>();
    private final Map<ModelKey, String> unavailableReasons = new HashMap<>();
    /** The highest version of each name, as of the last look at the repository. */
    private Map<String, ModelKey> latest = Map.of();
    private long usedBytes;

    ResidentModels(ModelRepository<X, Y> repository, long budgetBytes, Set<ModelKey> pinned, String containerName) {
        if (budgetBytes <= 0) {
            throw new IllegalArgumentException("the memory budget must be positive, got " + budgetBytes + " bytes");
        }
        this.repository = repository;
        this.budgetBytes = budgetBytes;
        this.pinned = Set.copyOf(pinned);
        this.loader = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "model-loader-" + containerName);
            t.setDaemon(true);
            return t;
        });
    }

    boolean isPinned(ModelKey key) {
        return pinned.contains(key);
    }

    synchronized boolean isLoaded(ModelKey key) {
        return resident.containsKey(key);
    }

    /** The input length of a loaded model, -1 when it is not loaded (or takes any length). */
    synchronized int inputLengthIfLoaded(ModelKey key) {
        Resident<X, Y> r = resident.get(key);
        return r == null ? -1 : r.model.inputLength();
    }

    /**
     * The model a request names; an empty version means the highest version the repository has.
     *
     * @throws ModelLoadException NOT_FOUND when the repository has no such model
     */
    ModelKey resolve(String name, String version) throws ModelLoadException {
        if (!name.isBlank() && !version.isBlank()) {
            ModelKey key = new ModelKey(name, version);
            synchronized (this) {
                if (resident.containsKey(key) || loading.containsKey(key)) {
                    return key;
                }
            }
            if (lookAtRepository().contains(key)) {
                return key;
            }
        } else if (!name.isBlank()) {
            synchronized (this) {
                ModelKey key = latest.get(name);
                if (key != null) {
                    return key;
                }
            }
            lookAtRepository();
            synchronized (this) {
                ModelKey key = latest.get(name);
                if (key != null) {
                    return key;
                }
            }
        }
        throw new ModelLoadException(ModelLoadException.Reason.NOT_FOUND, unknownModelMessage(name, version));
    }

    /** Every known version of {@code name} (in the repository, loading or loaded). */
    List<ModelKey> versionsOf(String name) {
        return index(false).stream().map(IndexEntry::model).filter(k -> k.name().equals(name)).toList();
    }

    /**
     * The model, loaded (on the loader thread if it is not), and held until the lease is released
     * so that an unload waits for the batch. Fails with a {@link ModelLoadException} when it
     * cannot be loaded.
     */
    CompletableFuture<Lease<X, Y>> acquire(ModelKey key) {
        CompletableFuture<Resident<X, Y>> pending;
        synchronized (this) {
            Resident<X, Y> r = touch(key);
            if (r != null && r.retain()) {
                return CompletableFuture.completedFuture(new Lease<>(r, 0));
            }
            pending = startLoad(key);
        }
        // an eviction between the end of the load and this retain sends the request round again
        return pending.thenCompose(r -> r.retain() ? CompletableFuture.completedFuture(new Lease<>(r, r.loadNanos))
                : acquire(key));
    }

    /** Loads the model unless it is loaded; a loaded one becomes the most recently used. */
    CompletableFuture<Void> load(ModelKey key) {
        synchronized (this) {
            return startLoad(key).thenApply(r -> null);
        }
    }

    /** Unloads the model (after its load, if it is loading); unloading one that is not loaded does nothing. */
    CompletableFuture<Void> unload(ModelKey key) {
        if (pinned.contains(key)) {
            throw new IllegalStateException("model " + key + " is pinned");
        }
        CompletableFuture<Resident<X, Y>> pending;
        synchronized (this) {
            pending = loading.get(key);
            if (pending == null) {
                unloadLocked(key, "unloaded on request");
                return CompletableFuture.completedFuture(null);
            }
        }
        return pending.handle((r, e) -> {
            synchronized (this) {
                unloadLocked(key, "unloaded on request");
            }
            return null;
        });
    }

    /** Every model of the repository and every loaded one, with its state; {@code readyOnly}: the loaded ones. */
    List<IndexEntry> index(boolean readyOnly) {
        List<ModelKey> available = lookAtRepository();
        List<IndexEntry> out = new ArrayList<>();
        synchronized (this) {
            Set<ModelKey> keys = new TreeSet<>(ModelKey.ORDER);
            keys.addAll(available);
            keys.addAll(resident.keySet());
            keys.addAll(loading.keySet());
            for (ModelKey key : keys) {
                Resident<X, Y> r = resident.get(key);
                if (r != null) {
                    out.add(new IndexEntry(key, State.READY, "load_time_ns=" + r.loadNanos + " size_bytes=" + r.sizeBytes));
                } else if (!readyOnly && loading.containsKey(key)) {
                    out.add(new IndexEntry(key, State.LOADING, ""));
                } else if (!readyOnly) {
                    out.add(new IndexEntry(key, State.UNAVAILABLE, unavailableReasons.getOrDefault(key, "not loaded")));
                }
            }
        }
        return out;
    }

    private List<ModelKey> lookAtRepository() {
        List<ModelKey> all = repository.models();
        Map<String, ModelKey> highest = new HashMap<>();
        for (ModelKey k : all) {
            highest.merge(k.name(), k, (a, b) -> ModelKey.VERSION_ORDER.compare(a.version(), b.version()) >= 0 ? a : b);
        }
        synchronized (this) {
            latest = Map.copyOf(highest);
        }
        return all;
    }

    /** Marks a loaded model as the most recently used and returns it (null if not loaded); called with this held. */
    private Resident<X, Y> touch(ModelKey key) {
        Resident<X, Y> r = resident.remove(key);
        if (r != null) {
            resident.put(key, r);
        }
        return r;
    }

    /** Called with this held. */
    private CompletableFuture<Resident<X, Y>> startLoad(ModelKey key) {
        Resident<X, Y> r = touch(key);
        if (r != null) {
            return CompletableFuture.completedFuture(r);
        }
        CompletableFuture<Resident<X, Y>> f = loading.get(key);
        if (f != null) {
            return f;
        }
        CompletableFuture<Resident<X, Y>> started = new CompletableFuture<>();
        loading.put(key, started);
        try {
            loader.execute(() -> runLoad(key, started));
        } catch (RejectedExecutionException e) {
            loading.remove(key);
            started.completeExceptionally(new IllegalStateException("the container is shutting down"));
        }
        return started;
    }

    /** On the loader thread. */
    private void runLoad(ModelKey key, CompletableFuture<Resident<X, Y>> done) {
        Resident<X, Y> loaded;
        try {
            long size = repository.sizeBytes(key);
            if (size > budgetBytes) {
                throw new ModelLoadException(ModelLoadException.Reason.TOO_LARGE, "model " + key + " takes " + size
                        + " bytes, more than the container's whole memory budget of " + budgetBytes + " bytes");
            }
            synchronized (this) {
                makeRoom(key, size);
                usedBytes += size;
            }
            long start = System.nanoTime();
            LoadedModel<X, Y> model;
            try {
                model = repository.load(key);
            } catch (ModelLoadException | RuntimeException e) {
                synchronized (this) {
                    usedBytes -= size;
                }
                throw e;
            }
            loaded = new Resident<>(key, model, size, System.nanoTime() - start);
        } catch (Exception e) {
            synchronized (this) {
                loading.remove(key);
                unavailableReasons.put(key, "load failed: " + e.getMessage());
            }
            LOG.warn("loading model {} failed: {}", key, e.getMessage());
            done.completeExceptionally(e);
            return;
        }
        long used;
        synchronized (this) {
            loading.remove(key);
            unavailableReasons.remove(key);
            resident.put(key, loaded);
            used = usedBytes;
        }
        LOG.info("loaded model {} in {} ms: {} bytes; {} bytes in use{}", key, loaded.loadNanos / 1_000_000,
                loaded.sizeBytes, used, budgetBytes == Long.MAX_VALUE ? "" : " of a budget of " + budgetBytes);
        done.complete(loaded);
    }

    /** Unloads least recently used models until {@code size} more bytes fit; called with this held. */
    private void makeRoom(ModelKey key, long size) throws ModelLoadException {
        long free = budgetBytes - usedBytes;
        List<Resident<X, Y>> victims = new ArrayList<>();
        for (Resident<X, Y> r : resident.values()) {
            if (free >= size) {
                break;
            }
            if (!pinned.contains(r.key)) {
                victims.add(r);
                free += r.sizeBytes;
            }
        }
        if (free < size) {
            throw new ModelLoadException(ModelLoadException.Reason.TOO_LARGE, "model " + key + " takes " + size
                    + " bytes; the memory budget of " + budgetBytes + " bytes has only " + free
                    + " bytes left even after unloading every model that may be unloaded");
        }
        for (Resident<X, Y> victim : victims) {
            LOG.info("unloading model {} ({} bytes), the least recently used, to make room for {}", victim.key,
                    victim.sizeBytes, key);
            unloadLocked(victim.key, "unloaded as the least recently used to make room for " + key);
        }
    }

    private void unloadLocked(ModelKey key, String reason) {
        Resident<X, Y> r = resident.remove(key);
        if (r != null) {
            usedBytes -= r.sizeBytes;
            unavailableReasons.put(key, reason);
            r.retire();
        }
    }

    private String unknownModelMessage(String name, String version) {
        List<ModelKey> all = repository.models();
        List<String> versions = all.stream().filter(k -> k.name().equals(name)).map(ModelKey::version).toList();
        if (!versions.isEmpty()) {
            return "unknown version '" + version + "' of model '" + name + "': this container serves version"
                    + (versions.size() == 1 ? " '" + versions.get(0) + "'" : "s " + versions);
        }
        List<String> names = all.stream().map(ModelKey::name).distinct().toList();
        String served = names.size() == 1 ? "'" + names.get(0) + "'"
                : names.size() + " models (" + names.stream().limit(NAMES_IN_MESSAGES).collect(Collectors.joining(", "))
                        + (names.size() > NAMES_IN_MESSAGES ? ", …" : "") + ")";
        return "unknown model '" + name + "': this container serves " + served;
    }

    /** Unloads every model; in-flight batches keep theirs until they end. */
    @Override
    public void close() {
        loader.shutdownNow();
        synchronized (this) {
            for (ModelKey key : new ArrayList<>(resident.keySet())) {
                unloadLocked(key, "container closed");
            }
        }
    }

    /** A loaded model held by one batch; {@link #release()} it when the batch is done. */
    static final class Lease<X, Y> {
        private final Resident<X, Y> resident;
        private final long loadNanos;

        private Lease(Resident<X, Y> resident, long loadNanos) {
            this.resident = resident;
            this.loadNanos = loadNanos;
        }

        ModelKey key() {
            return resident.key;
        }

        LoadedModel<X, Y> model() {
            return resident.model;
        }

        /** The model's load time when this batch waited for the load; 0 when it was already loaded. */
        long loadNanos() {
            return loadNanos;
        }

        void release() {
            resident.release();
        }
    }

    /** A loaded model, its measured size and load time, and the batches that hold it. */
    private static final class Resident<X, Y> {
        final ModelKey key;
        final LoadedModel<X, Y> model;
        final long sizeBytes;
        final long loadNanos;
        private int leases;
        private boolean retired;

        Resident(ModelKey key, LoadedModel<X, Y> model, long sizeBytes, long loadNanos) {
            this.key = key;
            this.model = model;
            this.sizeBytes = sizeBytes;
            this.loadNanos = loadNanos;
        }

        synchronized boolean retain() {
            if (retired) {
                return false;
            }
            leases++;
            return true;
        }

        void release() {
            boolean close;
            synchronized (this) {
                leases--;
                close = retired && leases == 0;
            }
            if (close) {
                closeModel();
            }
        }

        void retire() {
            boolean close;
            synchronized (this) {
                retired = true;
                close = leases == 0;
            }
            if (close) {
                closeModel();
            }
        }

        private void closeModel() {
            try {
                model.resources().close();
            } catch (Exception e) {
                LOG.warn("closing model {} failed", key, e);
            }
        }
    }
}

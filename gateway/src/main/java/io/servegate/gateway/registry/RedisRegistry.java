package io.servegate.gateway.registry;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.reactive.RedisReactiveCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * A registry kept in Redis, so that several gateway instances share it; each instance serves
 * reads from its own in-memory {@link RegistrySnapshot} and sees other instances' changes within
 * about one poll interval (usually much sooner, through pub/sub).
 *
 * <h2>Layout</h2> (with the default key prefix {@code servegate}; values are JSON objects with a
 * {@code "v": 1} schema-version field)
 * <ul>
 *   <li>{@code servegate:apps} — HASH app name → app JSON (without links)</li>
 *   <li>{@code servegate:links} — HASH app name → JSON array of linked model names, in link order</li>
 *   <li>{@code servegate:models} — HASH {@code name:version} → model version JSON</li>
 *   <li>{@code servegate:current} — HASH model name → current version</li>
 *   <li>{@code servegate:replicas} — HASH replica id → replica JSON</li>
 *   <li>{@code servegate:pipelines} — HASH pipeline name → pipeline JSON ({@link PipelineJson})</li>
 *   <li>{@code servegate:profiles} — HASH {@code name:version:hardware} → model profile JSON</li>
 *   <li>{@code servegate:revision} — STRING counter, INCRed by every change; it is the snapshots'
 *       {@link RegistrySnapshot#revision()}</li>
 *   <li>{@code servegate:changed} — pub/sub channel; every change publishes its new revision</li>
 * </ul>
 *
 * <h2>Writes</h2> Each write is one Lua script (EVALSHA, falling back to EVAL when the server
 * lost its script cache) that validates and applies atomically, bumps the revision and publishes
 * it, so two instances racing on the same write get exactly one success. The write's
 * {@link Mono} completes after this instance has reloaded a snapshot that includes the change;
 * it completes on this registry's worker thread. If the reload itself fails the write still
 * succeeds (it is committed) and the poller catches up.
 *
 * <h2>Reads and refresh</h2> The full state is small and is reloaded atomically (one read-only
 * script) whenever it changed: after a local write, on a pub/sub message, and when the poller —
 * which reads the revision every {@code pollInterval} as a fallback for missed messages — sees a
 * different revision. Reloads use Lettuce's reactive API, never block a caller's thread, run one
 * at a time and are applied in order on a single daemon worker thread, which also calls the
 * listeners.
 *
 * <h2>Startup and failures</h2> The constructor connects, subscribes and loads the first
 * snapshot <em>synchronously</em> (blocking for at most a few command timeouts; meant for
 * application startup) and throws {@link RegistryUnavailableException} if Redis cannot be
 * reached. Later, while Redis is down, reads keep serving the last snapshot and writes fail with
 * {@link RegistryUnavailableException} ("registry store unreachable: ...") after at most the
 * command timeout. Use {@link #newClient(String)} (commands rejected while disconnected, short
 * timeouts) for fast failures; with Lettuce's default client options commands issued while
 * disconnected are queued until the timeout.
 *
 * <p>A {@link RedisClient} passed to a constructor belongs to the caller: {@link #close()} closes
 * this registry's connections but does not shut the client down ({@link #connect} creates and
 * owns one).
 */
public final class RedisRegistry implements Registry {

    /** The default key prefix. */
    public static final String DEFAULT_KEY_PREFIX = "servegate";
    /** The default interval at which the revision is polled. */
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(500);
    /** The default time a Redis command may take before the store counts as unreachable. */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(2);

    private static final Logger log = LoggerFactory.getLogger(RedisRegistry.class);

    private final String channel;
    private final String revisionKey;
    private final String[] keys;
    private final Duration commandTimeout;
    private final StatefulRedisConnection<String, String> connection;
    private final StatefulRedisPubSubConnection<String, String> pubSub;
    private final RedisReactiveCommands<String, String> redis;
    private final String readSha;
    private final String writeSha;
    private final ScheduledExecutorService worker;
    private final ScheduledFuture<?> pollTask;
    private final List<Consumer<RegistrySnapshot>> listeners = new CopyOnWriteArrayList<>();
    /** Set by {@link #connect}: a client this registry created and shuts down. */
    private volatile RedisClient ownedClient;
    private volatile RegistrySnapshot snapshot;
    /** The snapshot with the JSON it was read from: what a compare-and-set write expects to find. */
    private volatile Stored stored;
    private volatile boolean closed;
    /** Set at the end of the constructor; change messages are ignored before. */
    private volatile boolean started;

    // Confined to the worker thread.
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private long reloadRequested;
    private long reloadDone;
    private boolean reloadInFlight;
    private boolean pollInFlight;
    private boolean storeDown;

    /** A loaded snapshot and the model and pipeline JSON it was parsed from, as Redis held them. */
    private record Stored(RegistrySnapshot snapshot, Map<String, String> models, Map<String, String> pipelines) {
    }

    /** A write waiting for a reload that started after it committed. */
    private record Waiter(long seq, MonoSink<Void> sink) {
    }

    /**
     * Uses the default key prefix and poll interval.
     *
     * @see #RedisRegistry(RedisClient, String, Duration, Duration)
     */
    public RedisRegistry(RedisClient client) {
        this(client, DEFAULT_KEY_PREFIX, DEFAULT_POLL_INTERVAL);
    }

    /**
     * Uses the default command timeout.
     *
     * @see #RedisRegistry(RedisClient, String, Duration, Duration)
     */
    public RedisRegistry(RedisClient client, String keyPrefix, Duration pollInterval) {
        this(client, keyPrefix, pollInterval, DEFAULT_COMMAND_TIMEOUT);
    }

    /**
     * Connects, subscribes to the change channel and loads the first snapshot, blocking until
     * done (startup only).
     *
     * @param client         the Lettuce client (not shut down by {@link #close()})
     * @param keyPrefix      prefix of every key and of the channel, e.g. {@code "servegate"}
     * @param pollInterval   how often the revision is polled as a fallback for pub/sub, {@code > 0}
     * @param commandTimeout how long a Redis round trip may take, {@code > 0}
     * @throws RegistryUnavailableException if Redis cannot be reached
     */
    public RedisRegistry(RedisClient client, String keyPrefix, Duration pollInterval, Duration commandTimeout) {
        Objects.requireNonNull(client, "client");
        if (keyPrefix == null || keyPrefix.isBlank()) {
            throw new IllegalArgumentException("keyPrefix must not be blank");
        }
        if (pollInterval == null || pollInterval.isNegative() || pollInterval.isZero()) {
            throw new IllegalArgumentException("pollInterval must be > 0, was " + pollInterval);
        }
        if (commandTimeout == null || commandTimeout.isNegative() || commandTimeout.isZero()) {
            throw new IllegalArgumentException("commandTimeout must be > 0, was " + commandTimeout);
        }
        this.commandTimeout = commandTimeout;
        this.channel = keyPrefix + ":changed";
        this.revisionKey = keyPrefix + ":revision";
        this.keys = new String[] {keyPrefix + ":apps", keyPrefix + ":links", keyPrefix + ":models",
            keyPrefix + ":current", keyPrefix + ":replicas", revisionKey, keyPrefix + ":pipelines",
            keyPrefix + ":profiles"};

        this.worker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "servegate-registry-" + keyPrefix);
            t.setDaemon(true);
            return t;
        });
        StatefulRedisConnection<String, String> conn = null;
        StatefulRedisPubSubConnection<String, String> ps = null;
        try {
            conn = client.connect(StringCodec.UTF8);
            ps = client.connectPubSub(StringCodec.UTF8);
            ps.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String ch, String message) {
                    if (channel.equals(ch)) {
                        onChangeMessage(message);
                    }
                }
            });
            ps.async().subscribe(channel).get(commandTimeout.toMillis(), TimeUnit.MILLISECONDS);
            this.connection = conn;
            this.pubSub = ps;
            this.redis = conn.reactive();
            this.readSha = redis.digest(RedisScripts.READ);
            this.writeSha = redis.digest(RedisScripts.WRITE);
            // subscribed first, so no change between this load and the subscription is missed
            this.stored = parse(eval(RedisScripts.READ, readSha).block(commandTimeout.multipliedBy(2)));
            this.snapshot = stored.snapshot();
        } catch (Exception e) {
            worker.shutdownNow();
            closeQuietly(ps);
            closeQuietly(conn);
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            Throwable cause = e instanceof ExecutionException && e.getCause() != null
                    ? e.getCause() : e;
            throw cause instanceof RegistryUnavailableException u ? u
                    : new RegistryUnavailableException("registry store unreachable: " + describe(cause), cause);
        }
        // Messages that arrived before this point were ignored (see onChangeMessage); the first
        // poll, right now, catches any change they announced that the initial load missed.
        started = true;
        long pollMillis = Math.max(1, pollInterval.toMillis());
        this.pollTask = worker.scheduleWithFixedDelay(this::poll, 0, pollMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * Creates a Lettuce client with the options this registry works best with: commands are
     * rejected at once while disconnected (so writes fail fast when Redis is down), it reconnects
     * automatically (re-subscribing), and connects and commands time out after
     * {@link #DEFAULT_COMMAND_TIMEOUT}. The caller shuts it down.
     *
     * @param redisUri e.g. {@code redis://127.0.0.1:6379}
     * @return a new client
     */
    public static RedisClient newClient(String redisUri) {
        return newClient(RedisURI.create(redisUri), null);
    }

    /**
     * {@link #newClient(String)} for a URI that may carry credentials and TLS settings.
     *
     * @param ssl trust material for TLS connections; {@code null} = the JVM's defaults
     */
    public static RedisClient newClient(RedisURI redisUri, SslOptions ssl) {
        RedisClient client = RedisClient.create(redisUri);
        ClientOptions.Builder options = ClientOptions.builder();
        if (ssl != null) {
            options.sslOptions(ssl);
        }
        client.setOptions(options
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .socketOptions(SocketOptions.builder().connectTimeout(DEFAULT_COMMAND_TIMEOUT).build())
                .timeoutOptions(TimeoutOptions.enabled(DEFAULT_COMMAND_TIMEOUT))
                .build());
        return client;
    }

    /**
     * Creates a client with {@link #newClient(String)} and a registry on it that shuts the client
     * down when closed: the usual way to wire a gateway.
     *
     * @param redisUri     e.g. {@code redis://127.0.0.1:6379}
     * @param keyPrefix    prefix of every key, e.g. {@link #DEFAULT_KEY_PREFIX}
     * @param pollInterval e.g. {@link #DEFAULT_POLL_INTERVAL}
     * @return the started registry
     * @throws RegistryUnavailableException if Redis cannot be reached (the client is shut down)
     */
    public static RedisRegistry connect(String redisUri, String keyPrefix, Duration pollInterval) {
        return connect(newClient(redisUri), keyPrefix, pollInterval);
    }

    /** {@link #connect(String, String, Duration)} on a client from {@link #newClient(RedisURI, SslOptions)}. */
    public static RedisRegistry connect(RedisURI redisUri, SslOptions ssl, String keyPrefix, Duration pollInterval) {
        return connect(newClient(redisUri, ssl), keyPrefix, pollInterval);
    }

    private static RedisRegistry connect(RedisClient client, String keyPrefix, Duration pollInterval) {
        try {
            RedisRegistry registry = new RedisRegistry(client, keyPrefix, pollInterval);
            registry.ownedClient = client;
            return registry;
        } catch (RuntimeException e) {
            client.shutdown();
            throw e;
        }
    }

    @Override
    public RegistrySnapshot snapshot() {
        return snapshot;
    }

    @Override
    public Mono<Void> addApp(Application app) {
        return Mono.defer(() -> {
            Application a = RegistryChecks.app(app);
            List<String> args = new ArrayList<>(List.of(a.name(), RegistryJson.app(a), a.inputType(),
                    RegistryJson.links(a.linkedModels())));
            args.addAll(a.linkedModels());
            return write("addApp", args);
        });
    }

    @Override
    public Mono<Void> deleteApp(String name) {
        return Mono.defer(() -> write("deleteApp", List.of(RegistryChecks.name("app", name))));
    }

    @Override
    public Mono<Void> addPipeline(Pipeline pipeline) {
        return Mono.defer(() -> {
            PipelineGraph graph = PipelineGraph.of(pipeline);
            List<String> args = new ArrayList<>(List.of(pipeline.name(), PipelineJson.text(pipeline)));
            graph.modelInputTypes().forEach((model, type) -> {
                args.add(model);
                args.add(type);
            });
            return write("addPipeline", args);
        });
    }

    @Override
    public Mono<Void> deletePipeline(String name) {
        return Mono.defer(() -> write("deletePipeline", List.of(RegistryChecks.name("pipeline", name))));
    }

    @Override
    public Mono<Void> addModel(ModelVersion model) {
        return Mono.defer(() -> {
            ModelVersion m = RegistryChecks.model(model);
            return write("addModel", List.of(m.name(), m.version(), RegistryJson.model(m), m.inputType()));
        });
    }

    @Override
    public Mono<Void> setModelVersion(String name, String version) {
        return Mono.defer(() -> write("setModelVersion",
                List.of(RegistryChecks.name("model", name), RegistryChecks.name("version", version))));
    }

    @Override
    public Mono<Void> deleteVersionedModel(String name, String version) {
        return Mono.defer(() -> write("deleteVersionedModel",
                List.of(RegistryChecks.name("model", name), RegistryChecks.name("version", version))));
    }

    @Override
    public Mono<Void> addModelLinks(String app, List<String> models) {
        return Mono.defer(() -> {
            List<String> args = new ArrayList<>();
            args.add(RegistryChecks.name("app", app));
            args.addAll(RegistryChecks.modelNames(models));
            return write("addModelLinks", args);
        });
    }

    @Override
    public Mono<Void> deleteModelLinks(String app, List<String> models) {
        return Mono.defer(() -> {
            List<String> args = new ArrayList<>();
            args.add(RegistryChecks.name("app", app));
            args.addAll(RegistryChecks.plainNames(models));
            return write("deleteModelLinks", args);
        });
    }

    @Override
    public Mono<Void> addReplica(ContainerReplica replica) {
        return Mono.defer(() -> {
            ContainerReplica r = RegistryChecks.replica(replica);
            return write("addReplica", List.of(r.id(), r.modelName(), r.modelVersion(), RegistryJson.replica(r)));
        });
    }

    @Override
    public Mono<Void> removeReplica(String id) {
        return Mono.defer(() -> write("removeReplica", List.of(RegistryChecks.replicaId(id))));
    }

    @Override
    public Mono<Void> putProfile(ModelProfile profile) {
        return Mono.defer(() -> {
            ModelProfile p = RegistryChecks.profile(profile);
            return write("putProfile", List.of(p.modelName(), p.modelVersion(), p.key(), RegistryJson.profile(p)));
        });
    }

    /**
     * Validated on this instance's snapshot, then written only if the pipeline and the model
     * versions are still stored as the JSON that snapshot was read from (else {@code CONFLICT}).
     */
    @Override
    public Mono<Void> applyPipelinePlan(PipelinePlanChange plan) {
        return Mono.defer(() -> {
            Stored st = stored;
            RegistryState.Planned planned = RegistryState.of(st.snapshot()).planned(plan);
            List<String> args = new ArrayList<>(List.of(plan.pipeline(), st.pipelines().get(plan.pipeline()),
                    PipelineJson.text(planned.pipeline())));
            for (ModelVersion m : planned.models()) {
                String key = RegistryChecks.modelKey(m.name(), m.version());
                args.add(key);
                args.add(st.models().get(key));
                args.add(RegistryJson.model(m));
            }
            return write("applyPipelinePlan", args);
        });
    }

    @Override
    public void addListener(Consumer<RegistrySnapshot> listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /**
     * Stops polling, closes the connections and the worker thread; pending writes fail. Shuts the
     * {@link RedisClient} down only if {@link #connect} created it. Idempotent.
     */
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
            worker.awaitTermination(commandTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeQuietly(pubSub);
        closeQuietly(connection);
        RedisClient owned = ownedClient;
        if (owned != null) {
            owned.shutdown();
        }
    }

    // ---------------------------------------------------------------- writes

    private Mono<Void> write(String op, List<String> args) {
        if (closed) {
            return Mono.error(closedException());
        }
        String[] argv = new String[args.size() + 2];
        argv[0] = op;
        argv[1] = channel;
        for (int i = 0; i < args.size(); i++) {
            argv[i + 2] = args.get(i);
        }
        return eval(RedisScripts.WRITE, writeSha, argv)
                .flatMap(r -> {
                    String status = String.valueOf(r.get(0));
                    if (status.equals("OK") || status.equals("NOOP")) {
                        long revision = ((Number) r.get(1)).longValue();
                        return revision == snapshot.revision() ? Mono.<Void>empty() : reloadAfterNow();
                    }
                    RegistryException.Kind kind;
                    try {
                        kind = RegistryException.Kind.valueOf(status);
                    } catch (IllegalArgumentException e) {
                        return Mono.error(new IllegalStateException("unexpected registry script reply " + r));
                    }
                    return Mono.error(new RegistryException(kind, String.valueOf(r.get(1))));
                });
    }

    /** Runs a script by SHA, loading it (EVAL) if the server does not know it; maps store failures. */
    private Mono<List<Object>> eval(String script, String sha, String... argv) {
        return Mono.defer(() -> redis.<Object>evalsha(sha, ScriptOutputType.MULTI, keys, argv).collectList())
                .onErrorResume(RedisNoScriptException.class,
                        e -> redis.<Object>eval(script, ScriptOutputType.MULTI, keys, argv).collectList())
                .map(RedisRegistry::unwrapReply)
                .timeout(commandTimeout)
                .onErrorMap(this::mapError);
    }

    /** Lettuce may emit a script's array reply as one list or element by element. */
    @SuppressWarnings("unchecked")
    private static List<Object> unwrapReply(List<Object> reply) {
        if (reply.size() == 1 && reply.get(0) instanceof List<?> inner) {
            return (List<Object>) inner;
        }
        return reply;
    }

    private Throwable mapError(Throwable e) {
        if (e instanceof RegistryException || e instanceof RegistryUnavailableException) {
            return e;
        }
        if (e instanceof TimeoutException) {
            return new RegistryUnavailableException("registry store unreachable: no reply from Redis within "
                    + commandTimeout.toMillis() + " ms", e);
        }
        if (e instanceof RedisCommandExecutionException) {
            return new RegistryUnavailableException("registry store unreachable: Redis refused the command: "
                    + describe(e), e);
        }
        if (e instanceof RedisException) {
            return new RegistryUnavailableException("registry store unreachable: " + describe(e), e);
        }
        return e;
    }

    /** The message, plus the root cause's (e.g. Redis' WRONGPASS or a TLS handshake failure under a connect error). */
    private static String describe(Throwable e) {
        String m = e.getMessage();
        m = m == null || m.isBlank() ? e.getClass().getSimpleName() : m;
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == e || root.getMessage() == null || m.contains(root.getMessage()) ? m
                : m + " (" + root.getMessage() + ")";
    }

    private static IllegalStateException closedException() {
        return new IllegalStateException("registry is closed");
    }

    // ---------------------------------------------------------------- reloads (worker thread)

    /** @return a Mono completing once a reload that started after this call was applied */
    private Mono<Void> reloadAfterNow() {
        return Mono.create(sink -> onWorker(() -> {
            if (closed) {
                sink.error(closedException());
                return;
            }
            waiters.add(new Waiter(++reloadRequested, sink));
            startReload();
        }, sink));
    }

    private void onChangeMessage(String message) {
        if (!started) {
            return;
        }
        onWorker(() -> {
            long revision;
            try {
                revision = Long.parseLong(message);
            } catch (NumberFormatException e) {
                revision = -1;
            }
            if (revision != snapshot.revision()) {
                reloadRequested++;
                startReload();
            }
        }, null);
    }

    private void poll() {
        if (pollInFlight || closed) {
            return;
        }
        pollInFlight = true;
        redis.get(revisionKey).defaultIfEmpty("0").timeout(commandTimeout).subscribe(
                value -> onWorker(() -> {
                    pollInFlight = false;
                    if (storeDown) {
                        storeDown = false;
                        log.info("registry store reachable again");
                    }
                    long revision;
                    try {
                        revision = Long.parseLong(value);
                    } catch (NumberFormatException e) {
                        revision = -1;
                    }
                    if (revision != snapshot.revision()) {
                        reloadRequested++;
                        startReload();
                    }
                }, null),
                error -> onWorker(() -> {
                    pollInFlight = false;
                    if (!storeDown) {
                        storeDown = true;
                        log.warn("registry store unreachable, serving snapshot revision {}: {}",
                                snapshot.revision(), describe(error));
                    }
                }, null));
    }

    private void startReload() {
        if (reloadInFlight || reloadDone >= reloadRequested || closed) {
            return;
        }
        reloadInFlight = true;
        long target = reloadRequested;
        // the reply is parsed on the worker, not on Lettuce's event loop
        eval(RedisScripts.READ, readSha).subscribe(
                reply -> onWorker(() -> reloadFinished(target, reply, null), null),
                e -> onWorker(() -> reloadFinished(target, null, e), null));
    }

    private void reloadFinished(long target, List<Object> reply, Throwable failure) {
        reloadInFlight = false;
        reloadDone = Math.max(reloadDone, target);
        Throwable error = failure;
        Stored loaded = null;
        if (reply != null) {
            try {
                loaded = parse(reply);
            } catch (RuntimeException e) {
                error = e;
            }
        }
        if (loaded != null) {
            apply(loaded);
        } else {
            log.warn("registry reload failed, serving snapshot revision {}: {}", snapshot.revision(),
                    describe(error));
        }
        while (!waiters.isEmpty() && waiters.peek().seq() <= target) {
            waiters.poll().sink().success();
        }
        startReload();
    }

    private void apply(Stored loaded) {
        if (loaded.snapshot().revision() == snapshot.revision()) {
            return;
        }
        stored = loaded;
        snapshot = loaded.snapshot();
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

    // ---------------------------------------------------------------- loading

    private Stored parse(List<Object> reply) {
        long revision = Long.parseLong(String.valueOf(reply.get(0)));
        Map<String, String> apps = pairs(reply.get(1));
        Map<String, String> links = pairs(reply.get(2));
        Map<String, String> models = pairs(reply.get(3));
        Map<String, String> current = pairs(reply.get(4));
        Map<String, String> replicas = pairs(reply.get(5));
        Map<String, String> pipelines = pairs(reply.get(6));
        Map<String, String> profiles = pairs(reply.get(7));

        List<Application> appList = new ArrayList<>();
        apps.forEach((name, json) -> {
            try {
                appList.add(RegistryJson.readApp(json, links.get(name)));
            } catch (RuntimeException e) {
                log.warn("skipping unreadable app {} in {}: {}", name, keys[0], describe(e));
            }
        });
        List<ModelVersion> modelList = new ArrayList<>();
        models.forEach((key, json) -> {
            try {
                modelList.add(RegistryJson.readModel(json));
            } catch (RuntimeException e) {
                log.warn("skipping unreadable model version {} in {}: {}", key, keys[2], describe(e));
            }
        });
        List<ContainerReplica> replicaList = new ArrayList<>();
        replicas.forEach((id, json) -> {
            try {
                replicaList.add(RegistryJson.readReplica(json));
            } catch (RuntimeException e) {
                log.warn("skipping unreadable replica {} in {}: {}", id, keys[4], describe(e));
            }
        });
        List<PipelineGraph> pipelineList = new ArrayList<>();
        pipelines.forEach((name, json) -> {
            try {
                pipelineList.add(PipelineGraph.of(PipelineJson.read(json)));
            } catch (RuntimeException e) {
                log.warn("skipping unreadable pipeline {} in {}: {}", name, keys[6], describe(e));
            }
        });
        List<ModelProfile> profileList = new ArrayList<>();
        profiles.forEach((key, json) -> {
            try {
                profileList.add(RegistryJson.readProfile(json));
            } catch (RuntimeException e) {
                log.warn("skipping unreadable profile {} in {}: {}", key, keys[7], describe(e));
            }
        });
        return new Stored(new RegistrySnapshot(revision, appList, modelList, current, replicaList, pipelineList,
                profileList), Map.copyOf(models), Map.copyOf(pipelines));
    }

    /** A flat HGETALL reply (field, value, field, value, ...) as a map. */
    private static Map<String, String> pairs(Object flat) {
        Map<String, String> out = new HashMap<>();
        if (flat instanceof List<?> list) {
            for (int i = 0; i + 1 < list.size(); i += 2) {
                out.put(String.valueOf(list.get(i)), String.valueOf(list.get(i + 1)));
            }
        }
        return out;
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            log.debug("closing {} failed", c, e);
        }
    }
}

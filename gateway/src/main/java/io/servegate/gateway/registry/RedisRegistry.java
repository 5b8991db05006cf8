package io.servegate.gateway.registry;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.reactive.RedisReactiveCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

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
 * different revision ({@link SnapshotReloader}). Reloads use Lettuce's reactive API, never block a
 * caller's thread, run one at a time and are applied in order on a single daemon worker thread,
 * which also calls the listeners.
 *
 * <h2>Startup and failures</h2> The constructor connects, subscribes and loads the first
 * snapshot <em>synchronously</em> (blocking for at most a few command timeouts; meant for
 * application startup) and throws {@link RegistryUnavailableException} if Redis cannot be
 * reached. Later, while Redis is down, reads keep serving the last snapshot and writes fail with
 * {@link RegistryUnavailableException} ("registry store unreachable: ...") after at most the
 * command timeout. Use a client from {@code config.RedisClients} (commands rejected while
 * disconnected, short timeouts) for fast failures; with Lettuce's default client options commands
 * issued while disconnected are queued until the timeout.
 *
 * <p>A {@link RedisClient} passed to a constructor belongs to the caller: {@link #close()} closes
 * this registry's connections but does not shut the client down (one given to {@link #connect}
 * is).
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
    /** Set at the end of the constructor; change messages are ignored before. */
    private volatile SnapshotReloader reloader;
    /** Set by {@link #connect}: a client this registry shuts down. */
    private volatile RedisClient ownedClient;
    private volatile boolean closed;

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

        StoredRegistry initial;
        StatefulRedisConnection<String, String> conn = null;
        StatefulRedisPubSubConnection<String, String> ps = null;
        try {
            conn = client.connect(StringCodec.UTF8);
            ps = client.connectPubSub(StringCodec.UTF8);
            ps.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String ch, String message) {
                    SnapshotReloader r = reloader;
                    if (channel.equals(ch) && r != null) {
                        r.onChangeMessage(message);
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
            initial = parse(eval(RedisScripts.READ, readSha).block(commandTimeout.multipliedBy(2)));
        } catch (Exception e) {
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
        // Messages that arrived before this point were ignored; the reloader's first poll, right
        // now, catches any change they announced that the initial load missed.
        this.reloader = new SnapshotReloader("servegate-registry-" + keyPrefix, initial,
                () -> eval(RedisScripts.READ, readSha), this::parse,
                () -> redis.get(revisionKey).timeout(commandTimeout), pollInterval, commandTimeout);
    }

    /**
     * A registry on {@code client} that shuts the client down when closed, or at once if Redis
     * cannot be reached: the usual way to wire a gateway (with a client from
     * {@code config.RedisClients}).
     *
     * @param keyPrefix    prefix of every key, e.g. {@link #DEFAULT_KEY_PREFIX}
     * @param pollInterval e.g. {@link #DEFAULT_POLL_INTERVAL}
     * @return the started registry
     * @throws RegistryUnavailableException if Redis cannot be reached
     */
    public static RedisRegistry connect(RedisClient client, String keyPrefix, Duration pollInterval) {
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
        return reloader.stored().snapshot();
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
            StoredRegistry st = reloader.stored();
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
        reloader.addListener(listener);
    }

    /**
     * Stops polling, closes the connections and the worker thread; pending writes fail. Shuts the
     * {@link RedisClient} down only if it was given to {@link #connect}. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        reloader.close();
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
            return Mono.error(SnapshotReloader.closedException());
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
                        return revision == snapshot().revision() ? Mono.<Void>empty() : reloader.reloadAfterNow();
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
    static String describe(Throwable e) {
        String m = e.getMessage();
        m = m == null || m.isBlank() ? e.getClass().getSimpleName() : m;
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == e || root.getMessage() == null || m.contains(root.getMessage()) ? m
                : m + " (" + root.getMessage() + ")";
    }

    private StoredRegistry parse(List<Object> reply) {
        return StoredRegistry.parse(reply, keys);
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

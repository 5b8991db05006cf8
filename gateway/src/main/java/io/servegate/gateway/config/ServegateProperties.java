package io.servegate.gateway.config;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.gateway.containers.ModelDirectories;
import io.servegate.gateway.containers.PathArguments;
import io.servegate.gateway.containers.ProcessCommandPolicy;
import io.servegate.gateway.tracing.OtlpProtocol;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Everything the gateway can be told, under {@code servegate.*}. The query port is Spring's
 * {@code server.port} (1337 by default).
 */
@ConfigurationProperties("servegate")
public record ServegateProperties(
        @DefaultValue Admin admin,
        @DefaultValue Cache cache,
        @DefaultValue Batching batching,
        @DefaultValue Scheduling scheduling,
        @DefaultValue Rpc rpc,
        @DefaultValue Limits limits,
        @DefaultValue Registry registry,
        @DefaultValue Selection selection,
        @DefaultValue Oip oip,
        /** Defaults leave this long before the SLO, for the answer's way out; 0 = exactly at the SLO. */
        @DefaultValue("1ms") Duration deadlineMargin,
        /**
         * A query gets its app's overload response at once when the gateway's timers run later
         * (servegate_timer_lag_seconds) than this share of the time it has left, since its
         * default would otherwise come after its SLO; 0 = never.
         */
        @DefaultValue("1") double timerLagShedFraction,
        @DefaultValue Demo demo,
        @DefaultValue Containers containers,
        @DefaultValue Metrics metrics,
        @DefaultValue Redis redis,
        @DefaultValue Autoscaling autoscaling,
        @DefaultValue Connections connections,
        @DefaultValue Fleet fleet,
        @DefaultValue Tracing tracing,
        @DefaultValue WarmupProperties warmup,
        @DefaultValue RolloutProperties rollouts) {


    /**
     * Gateways that share a Redis registry form a fleet: each model version is scheduled by one
     * of them, its owner, and the others forward its queries there. On the in-memory registry a
     * gateway is a fleet of one and none of this applies.
     */
    public record Fleet(
            /** Port of the internal forwarding hop between gateways; 0 = any free port (advertised as bound). */
            @DefaultValue("0") int port,
            /** Interface the hop listens on; empty = the advertised host's address, {@code 0.0.0.0} = all. */
            @DefaultValue("") String address,
            /** Host the other gateways reach this one at; empty = this machine's address. */
            @DefaultValue("") String advertiseHost,
            /** This gateway's name in the fleet (each join adds a random suffix); empty = host:port. */
            @DefaultValue("") String name,
            /** Time between heartbeats. */
            @DefaultValue("500ms") Duration heartbeat,
            /** How long a gateway that stopped heartbeating keeps its versions; at least 2 heartbeats. */
            @DefaultValue("2s") Duration lease,
            /** How far (fraction of the mean) a gateway's load may be from the mean before versions move. */
            @DefaultValue("0.25") double tolerance,
            /** A version with fewer queries per second than this weighs this much when balancing. */
            @DefaultValue("1.0") double minRate,
            /** Secret every gateway of the fleet presents on the hop and requires of the others. */
            @DefaultValue("") String secret,
            /** A file holding the secret (surrounding whitespace ignored), used when {@code secret} is empty. */
            @DefaultValue("") String secretFile,
            /** Refuse to start without a secret; false only where nothing but the gateways can reach the hop's port. */
            @DefaultValue("true") boolean requireSecret,
            /**
             * How long a gateway shutting down keeps scheduling its versions while the others get ready
             * to take them over; what it still owns then is granted to them as it leaves.
             */
            @DefaultValue("5s") Duration drainTimeout) {
    }

    /** The admin API's own server. */
    public record Admin(
            @DefaultValue("1338") int port,
            /** Loopback by default: only local operators can change what is deployed. */
            @DefaultValue("127.0.0.1") String address,
            /**
             * Bearer token every /admin/* call must present; empty = none, and then the gateway
             * refuses to start unless {@code address} is a loopback address.
             */
            @DefaultValue("") String token,
            /** A file holding the token (surrounding whitespace ignored), used when {@code token} is empty. */
            @DefaultValue("") String tokenFile) {
    }

    /**
     * OpenTelemetry tracing of queries, exported over OTLP (docs/tracing.md). Off by default: then
     * no span is made and no header read.
     *
     * @param enabled       whether queries are traced
     * @param endpoint      the OTLP receiver (a collector, Jaeger): {@code http://host:4317} for gRPC,
     *                      {@code http://host:4318} (or its full {@code /v1/traces} URL) for HTTP
     * @param protocol      {@code grpc} or {@code http-protobuf}
     * @param samplingRatio the share of traces begun here that are sampled, 0..1; a request whose
     *                      {@code traceparent} says sampled (or not) is followed as it says
     * @param serviceName   the {@code service.name} of the spans
     * @param exportTimeout how long one export may take
     */
    public record Tracing(
            @DefaultValue("false") boolean enabled,
            @DefaultValue("http://127.0.0.1:4317") String endpoint,
            @DefaultValue("grpc") OtlpProtocol protocol,
            @DefaultValue("1.0") double samplingRatio,
            @DefaultValue("servegate-gateway") String serviceName,
            @DefaultValue("10s") Duration exportTimeout) {

        public Tracing {
            if (!(samplingRatio >= 0 && samplingRatio <= 1)) {
                throw new IllegalArgumentException("servegate.tracing.sampling-ratio must be in 0..1, got "
                        + samplingRatio);
            }
            if (enabled && !endpoint.startsWith("http://") && !endpoint.startsWith("https://")) {
                throw new IllegalArgumentException("servegate.tracing.endpoint must be an http:// or https:// URL, got '"
                        + endpoint + "'");
            }
        }
    }

    /**
     * Who may read /metrics and the actuator endpoints other than the health probes: holders of
     * this token, else (when empty) of the admin token; open when neither is set.
     */
    public record Metrics(
            @DefaultValue("") String token,
            @DefaultValue("") String tokenFile) {
    }

    /**
     * Authentication and TLS for every Redis connection (registry and selection store), on top
     * of what their URIs say ({@code redis://user:password@host}, {@code rediss://} for TLS).
     */
    public record Redis(
            /** ACL user; empty = the URI's, or the default user. */
            @DefaultValue("") String username,
            /** Empty = the URI's password, if any. */
            @DefaultValue("") String password,
            /** TLS even for a {@code redis://} URI. */
            @DefaultValue("false") boolean tls,
            /** Check the server's certificate chain and host name; off only for tests and trusted networks. */
            @DefaultValue("true") boolean verifyPeer,
            /** PEM file of the CA(s) to trust; empty = the JVM's default trust store (or trust-store). */
            @DefaultValue("") String caFile,
            /** A PKCS#12/JKS trust store instead of a PEM CA file. */
            @DefaultValue("") String trustStore,
            @DefaultValue("") String trustStorePassword) {
    }

    /**
     * How long a client may take, and how many connections each port holds: the query and admin
     * HTTP ports, the OIP gRPC port and the fleet port, each within its cap, each client (remote
     * address) within its share of a port, and all together within the budget the process's
     * descriptor limit leaves. A connection closed for being slow, idle or over the cap is
     * counted in {@code servegate.connections.dropped} and summarised in the log at most once per
     * {@code logInterval}.
     */
    public record Connections(
            /** Open connections per port; one more is closed as soon as it is accepted. */
            @DefaultValue("10000") int maxConnections,
            /** Dropped connections are logged as one summary line per port at most this often. */
            @DefaultValue("1m") Duration logInterval,
            @DefaultValue Http http,
            @DefaultValue Grpc grpc,
            /** Descriptors kept out of the connection budget for replicas, Redis, files and logs (at most half the limit). */
            @DefaultValue("1024") int reservedDescriptors,
            /** Caps the budget of all ports together below the descriptor limit less the reserve; 0 = no further cap. */
            @DefaultValue("0") int maxTotalConnections,
            /** Open connections per port from one remote address (raise it behind a proxy that pools connections). */
            @DefaultValue("1000") int maxConnectionsPerClient,
            /** Request bytes each port holds at once: one more request with a body gets 503 (HTTP), a call over it RESOURCE_EXHAUSTED (gRPC). 0 = a quarter of the heap. */
            @DefaultValue("0B") DataSize maxBodyBytesInFlight,
            /** Request bytes each port holds at once from one remote address: one more request with a body gets 429 (HTTP), a call over it RESOURCE_EXHAUSTED (gRPC). 0 = half the port's budget; at least the largest body. */
            @DefaultValue("0B") DataSize maxBodyBytesInFlightPerClient) {

        public Connections {
            if (maxConnections < 1) {
                throw new IllegalArgumentException("servegate.connections.max-connections must be at least 1, got "
                        + maxConnections);
            }
            if (reservedDescriptors < 0 || maxTotalConnections < 0 || maxConnectionsPerClient < 1) {
                throw new IllegalArgumentException("servegate.connections: reserved-descriptors and "
                        + "max-total-connections must be >= 0 and max-connections-per-client >= 1, got "
                        + reservedDescriptors + ", " + maxTotalConnections + " and " + maxConnectionsPerClient);
            }
        }
    }

    /** Timeouts of the HTTP ports (query and admin), HTTP/1.1. */
    public record Http(
            /** A request's line and headers must arrive within this: from the connection's start, or a later request's first byte. */
            @DefaultValue("10s") Duration headerTimeout,
            /** Longest pause between two reads of a request body. */
            @DefaultValue("10s") Duration readTimeout,
            /** A request body must arrive whole within this of its headers. */
            @DefaultValue("60s") Duration requestTimeout,
            /** A kept-alive connection waits this long for its next request. */
            @DefaultValue("60s") Duration idleTimeout) {
    }

    /** Connections of the OIP gRPC port (HTTP/2), in grpc-java's terms. */
    public record Grpc(
            /** A new connection must finish the HTTP/2 (and TLS) handshake within this. */
            @DefaultValue("10s") Duration handshakeTimeout,
            /** A connection with no call in progress for this long is closed (GOAWAY). */
            @DefaultValue("5m") Duration maxConnectionIdle,
            /** Any connection is closed after this long, letting calls in progress finish within the grace. */
            @DefaultValue("30m") Duration maxConnectionAge,
            @DefaultValue("30s") Duration maxConnectionAgeGrace,
            /** The server pings a silent client after this long, and closes the connection if no answer comes within keepAliveTimeout. */
            @DefaultValue("2h") Duration keepAliveTime,
            @DefaultValue("20s") Duration keepAliveTimeout,
            /** Clients' pings more frequent than this are a protocol violation (GOAWAY ENHANCE_YOUR_CALM). */
            @DefaultValue("5m") Duration permitKeepAliveTime,
            /** Whether clients may ping while no call is in progress. */
            @DefaultValue("false") boolean permitKeepAliveWithoutCalls,
            /** Largest header (metadata) block of a call. */
            @DefaultValue("8KB") DataSize maxInboundMetadataSize,
            /** Calls one connection may have in progress (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS); a client's further calls wait on its side. */
            @DefaultValue("100") int maxConcurrentCallsPerConnection) {

        public Grpc {
            if (maxConcurrentCallsPerConnection < 1) {
                throw new IllegalArgumentException("servegate.connections.grpc.max-concurrent-calls-per-connection must "
                        + "be at least 1, got " + maxConcurrentCallsPerConnection);
            }
        }
    }

    /** The prediction cache (Clipper §4.2). */
    public record Cache(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("32MB") DataSize maxSize) {
    }

    /** Batching (Clipper §4.3), whatever the scheduling policy. */
    public record Batching(
            /** Clipper's delayed batching (§4.3.2): how long a partial batch may wait for more queries; 0 = off. */
            @DefaultValue("0ms") Duration batchWait,
            /** Queued queries per model version before new ones are rejected as overloaded. */
            @DefaultValue("4096") int queueCapacity,
            /** AIMD's latency objective for a model no app with an SLO is linked to. */
            @DefaultValue("100ms") Duration defaultSlo,
            /** No batch is larger: AIMD's ceiling and the largest size a latency profile covers. */
            @DefaultValue("256") int maxBatchSize,
            /** Service-time samples kept per replica and batch size. */
            @DefaultValue("16") int profileWindow,
            /** Older samples stop counting once newer ones exist, so a replica that was slow is trusted again. */
            @DefaultValue("500ms") Duration profileMaxAge) {
    }

    /** One scheduler per model version, across its replicas. */
    public record Scheduling(
            /** The policy of model versions that name none ({@code scheduler} in add_model / deploy_model). */
            @DefaultValue("adaptive") PolicyKind policy,
            /** Clockwork and Symphony send a batch only if it is predicted to answer this long before its earliest deadline. */
            @DefaultValue("0ms") Duration safetyMargin,
            /** Before a new replica takes queries, measure its batches of 1, 2, 4, ... up to profileMaxBatch. */
            @DefaultValue("true") boolean profileOnRegister,
            @DefaultValue("32") int profileMaxBatch,
            /**
             * Record the run to this file for {@code bin/sim replay} (arrivals with their deadlines, each
             * batch's service time); unset or empty = off.
             */
            String recordFile) {
    }

    /** Per-model autoscalers, turned on with the admin API's {@code set_autoscaling}. */
    public record Autoscaling(
            /** How often each autoscaler decides. */
            @DefaultValue("1s") Duration tick,
            /** Decisions kept per model for {@code get_autoscaling}. */
            @DefaultValue("20") int decisionsKept,
            /** A failed scale action is retried after this, doubled after each failure in a row... */
            @DefaultValue("1s") Duration retryInitial,
            /** ...up to this. */
            @DefaultValue("30s") Duration retryMax) {
    }

    /** Calls to model containers. */
    public record Rpc(
            /**
             * A batch RPC waits this long past its latest deadline, so that a slow container is not cut
             * off mid-batch: only a call this late is an error for the replica's circuit breaker.
             */
            @DefaultValue("1s") Duration minBatchTimeout,
            @DefaultValue("64MB") DataSize maxMessageSize,
            /** Circuit breaker per replica (Resilience4j). */
            @DefaultValue("50") float failureRateThreshold,
            @DefaultValue("10") int slidingWindowSize,
            @DefaultValue("5") int minimumNumberOfCalls,
            @DefaultValue("2s") Duration waitInOpenState,
            @DefaultValue("2") int permittedCallsInHalfOpenState) {
    }

    /** Input limits. */
    public record Limits(
            /**
             * Request bodies beyond this get 413, on both ports; also the gateway's largest OIP gRPC
             * message. 16MB takes a batch of 64 images of 150,528 bytes, raw or as base64 JSON.
             */
            @DefaultValue("16MB") DataSize maxBodySize,
            @DefaultValue("1000") int maxBatchInputs,
            @DefaultValue("1048576") int maxInputLength) {
    }

    /** Where apps, models and links live. */
    public record Registry(
            /** {@code memory} (embedded default) or {@code redis}. */
            @DefaultValue("memory") String store,
            @DefaultValue("redis://127.0.0.1:6379") String redisUri,
            @DefaultValue("servegate") String keyPrefix,
            /** How long a gateway reuses an app's query keys read from the store: the bound on a revocation reaching every gateway of a fleet. */
            @DefaultValue("1s") Duration queryKeyCacheTtl) {
    }

    /** The model selection layer's per-app, per-context policy states (Clipper §5). */
    public record Selection(
            /** {@code memory} (bounded, the embedded default) or {@code redis}. */
            @DefaultValue("memory") String store,
            /** Redis for the states; empty = the registry's. */
            @DefaultValue("") String redisUri,
            @DefaultValue("servegate") String keyPrefix,
            /** A state expires this long after its last feedback; 0 = never. */
            @DefaultValue("7d") Duration ttl,
            /** Bound of each gateway's last-known-state fallback. */
            @DefaultValue("100000") long maxStates,
            /** Per-user ({@code uid} or {@code context}) states one app keeps at most; beyond, the least recently updated is evicted. */
            @DefaultValue("100000") long maxStatesPerApp,
            /** Longest {@code uid} or {@code context}, in UTF-8 bytes; longer ones get 400. */
            @DefaultValue("256") int maxContextBytes,
            /** A query waits this long for its state before using the last known one. */
            @DefaultValue("20ms") Duration stateReadTimeout,
            /** Feedback waits this long for the models' predictions it is joined with. */
            @DefaultValue("2s") Duration feedbackTimeout,
            /** How long a prediction is remembered for the feedback about it (which models answered, with what probability). */
            @DefaultValue("10m") Duration playedTtl,
            /** Heap bound of those remembered predictions, mostly their inputs; 0 = remember none. */
            @DefaultValue("16MB") DataSize playedSize) {
    }

    /** The Open Inference Protocol endpoints (REST on the query port, gRPC on its own), which have no app SLO. */
    public record Oip(
            /** Deadline of an infer request; a gRPC call's own deadline, when it has one, is used instead. */
            @DefaultValue("1s") Duration timeout,
            /** Port of the gRPC binding ({@code GRPCInferenceService}); 0 = off. */
            @DefaultValue("8033") int grpcPort,
            /** Interface the gRPC binding listens on; empty = all, as the query port. */
            @DefaultValue("") String grpcAddress) {
    }

    /** The demo the README's first command starts: a real ONNX model as a local process. */
    public record Demo(
            @DefaultValue("false") boolean enabled,
            @DefaultValue("fashion") String app,
            @DefaultValue("fmnist-cnn") String model,
            @DefaultValue("containers/onnx/target/onnx-container.jar") String containerJar,
            @DefaultValue("containers/onnx/models/fmnist-cnn.onnx") String modelPath,
            @DefaultValue("50000") long latencySloMicros,
            @DefaultValue("-1") String defaultOutput,
            @DefaultValue("2") int replicas,
            @DefaultValue List<String> jvmArgs) {
    }

    /** Who starts, checks, restarts and stops model containers (the admin API's deploy_model). */
    public record Containers(
            /**
             * {@code process} (local child processes, the embedded default), {@code external}, or
             * {@code docker} or {@code kubernetes} from their modules, whose own settings
             * ({@code servegate.containers.docker.*}, {@code .kubernetes.*}) they bind themselves.
             */
            @DefaultValue("process") String manager,
            /** A started replica that is not ready (OIP ServerReady + ModelReady) by then is stopped and restarted. */
            @DefaultValue("60s") Duration readinessTimeout,
            /** Pause between readiness and liveness checks. */
            @DefaultValue("1s") Duration probeInterval,
            /** How long one check may take. */
            @DefaultValue("1s") Duration probeTimeout,
            /** Failed liveness checks in a row that unregister (and, if the manager runs it, restart) a replica. */
            @DefaultValue("2") int livenessFailures,
            /** {@code always}, {@code on-failure} (a non-zero exit or failed checks) or {@code never}. */
            @DefaultValue("always") String restartPolicy,
            /** Delay before the first restart; doubled after each failure in a row. */
            @DefaultValue("1s") Duration restartBackoff,
            @DefaultValue("60s") Duration restartBackoffMax,
            /** Between SIGTERM (the container drains) and SIGKILL. */
            @DefaultValue("30s") Duration stopGracePeriod,
            /** The most replicas one deploy_model or set_num_replicas may ask for. */
            @DefaultValue("64") int maxReplicas,
            /** What the {@code process} manager may run for deploy_model. */
            @DefaultValue ProcessManager process,
            /**
             * Directories model files may be loaded from: a command's model path variables must name
             * a path inside one (links resolved), and the process manager passes them to its
             * containers as {@code SERVEGATE_MODEL_DIRS}; unset = the project's own model directories
             * ({@link ModelDirectories#DEFAULT}), empty = none.
             */
            List<String> modelDirectories,
            /** The variables of a deploy_model {@code env} that name model files or directories (or other files a container reads). */
            @DefaultValue({"MODEL_PATH", "MODEL_DIR", "WARMUP_INPUT_FILE"}) List<String> modelPathEnv) {

        public Containers {
            modelDirectories = modelDirectories == null ? ModelDirectories.DEFAULT : modelDirectories;
        }
    }

    /**
     * What deploy_model may have the {@code process} manager run, as the gateway's user (see
     * {@link ProcessCommandPolicy}); refused commands get 403.
     */
    public record ProcessManager(
            /**
             * Argument prefixes a command must start with, each argument equal ({@code [java, -jar, x.jar]});
             * unset = the project's own containers ({@link ProcessCommandPolicy#defaultCommands()}), empty = none.
             */
            List<List<String>> allowedCommands,
            /** Variables a command's {@code env} may set. */
            @DefaultValue({"MODEL_PATH", "INPUT_TYPE", "MAX_MESSAGE_BYTES", "CONCURRENCY", "DRAIN_SECONDS",
                    "INTRA_OP_THREADS", "DEVICE", "DEVICE_ID", "OUTPUT", "BETA_MS", "ALPHA_MS", "CLASSES",
                    "TORCH_THREADS", "FASHION_MNIST_DIR", "ARCH", "IMAGE_SIZE", "PRECISION", "CUDNN_BENCHMARK",
                    "SEED", "MAX_BATCH_SIZE", "WARMUP_BATCH_SIZES", "WARMUP_RUNS", "WARMUP_INPUT_FILE"})
            List<String> allowedEnv,
            /** Refuse every command while the admin API has no token; false only where every local user is trusted. */
            @DefaultValue("true") boolean requireAdminToken,
            /**
             * Per program (an argument of an allowed prefix): its options that name files it reads
             * ({@code model}, checked like MODEL_PATH) or writes ({@code output}); unset = the project's
             * containers' ({@link PathArguments#defaults()}).
             */
            Map<String, PathArguments.Options> pathArguments,
            /** Where {@code output} options may write; empty = nowhere (such options get 403). */
            @DefaultValue List<String> outputDirectories) {

        public ProcessManager {
            allowedCommands = allowedCommands == null ? ProcessCommandPolicy.defaultCommands() : allowedCommands;
            pathArguments = pathArguments == null ? PathArguments.defaults() : pathArguments;
        }
    }
}

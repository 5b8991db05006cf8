package io.servegate.gateway.config;

import java.time.Duration;
import java.util.List;
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
        @DefaultValue Rpc rpc,
        @DefaultValue Limits limits,
        @DefaultValue Registry registry,
        @DefaultValue Selection selection,
        @DefaultValue Oip oip,
        /** Defaults leave this long before the SLO, for the answer's way out; 0 = exactly at the SLO. */
        @DefaultValue("1ms") Duration deadlineMargin,
        @DefaultValue Demo demo,
        @DefaultValue Containers containers,
        @DefaultValue Metrics metrics,
        @DefaultValue Redis redis) {

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

    /** The prediction cache (Clipper §4.2). */
    public record Cache(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("32MB") DataSize maxSize) {
    }

    /** Per-replica batching queues (Clipper §4.3). */
    public record Batching(
            /** Delayed batching (§4.3.2): how long a partial batch may wait for more queries; 0 = off. */
            @DefaultValue("0ms") Duration batchWait,
            /** Queued queries per replica before new ones are rejected. */
            @DefaultValue("4096") int queueCapacity,
            /** AIMD's latency objective for a model no app with an SLO is linked to. */
            @DefaultValue("100ms") Duration defaultSlo,
            @DefaultValue("1024") int maxBatchSize,
            /**
             * Clockwork's rule on top of AIMD: never send a batch that is expected to return after
             * a deadline in it, and answer the queries that cannot make it at once (with their
             * default) instead of at their deadline. Off (the default) = Clipper's behaviour exactly;
             * see the README for why it is not on by default yet.
             */
            @DefaultValue("false") boolean deadlineAware,
            /** Latency samples kept per replica and batch size for deadline-aware dispatch. */
            @DefaultValue("10") int profileWindow,
            /** Samples older than this are forgotten, so a replica that was slow gets tried again. */
            @DefaultValue("2s") Duration profileMaxAge) {
    }

    /** Calls to model containers. */
    public record Rpc(
            /** A batch RPC never waits less than this, so a slow container is not cut off mid-batch. */
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
            /** Request bodies beyond this get 413, on both ports. */
            @DefaultValue("4MB") DataSize maxBodySize,
            @DefaultValue("1000") int maxBatchInputs,
            @DefaultValue("1048576") int maxInputLength) {
    }

    /** Where apps, models and links live. */
    public record Registry(
            /** {@code memory} (embedded default) or {@code redis}. */
            @DefaultValue("memory") String store,
            @DefaultValue("redis://127.0.0.1:6379") String redisUri,
            @DefaultValue("servegate") String keyPrefix) {
    }

    /** The model selection layer's per-app, per-context policy states (Clipper §5). */
    public record Selection(
            /** {@code memory} (bounded, the embedded default) or {@code redis}. */
            @DefaultValue("memory") String store,
            /** Redis for the states; empty = the registry's. */
            @DefaultValue("") String redisUri,
            @DefaultValue("servegate") String keyPrefix,
            /** States untouched this long expire; 0 = never. */
            @DefaultValue("0s") Duration ttl,
            /** In-memory store bound, and the bound of each gateway's last-known-state fallback. */
            @DefaultValue("100000") long maxStates,
            /** A query waits this long for its state before using the last known one. */
            @DefaultValue("20ms") Duration stateReadTimeout,
            /** Feedback waits this long for the models' predictions it is joined with. */
            @DefaultValue("2s") Duration feedbackTimeout,
            /** How long a prediction is remembered for the feedback about it (which models answered, with what probability). */
            @DefaultValue("10m") Duration playedTtl,
            /** Heap bound of those remembered predictions, mostly their inputs; 0 = remember none. */
            @DefaultValue("16MB") DataSize playedSize) {
    }

    /** The Open Inference Protocol REST endpoints, which have no app and so no app SLO. */
    public record Oip(@DefaultValue("1s") Duration timeout) {
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
            /** {@code process} (local child processes, the embedded default), {@code docker}, {@code kubernetes} or {@code external}. */
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
            /** Settings of the {@code kubernetes} manager. */
            @DefaultValue Kubernetes kubernetes,
            /** Settings of the {@code docker} manager. */
            @DefaultValue Docker docker) {
    }

    /** The {@code docker} manager (besides the shared settings above; backoff is Docker's own). */
    public record Docker(
            /** The engine's API: {@code unix:///var/run/docker.sock} or {@code tcp://host:2375}. */
            @DefaultValue("unix:///var/run/docker.sock") String host,
            /** {@code host} (a free port is passed as PORT) or a Docker network; its port is then published on 127.0.0.1. */
            @DefaultValue("host") String network,
            /** The port a container listens on in a non-host network. */
            @DefaultValue("8001") int containerPort,
            /** Docker's retry limit for {@code on-failure}; 0 = unlimited. */
            @DefaultValue("0") int maxRestarts,
            /** The {@code servegate.owner} label: containers a gateway with this owner left behind are removed at its start. */
            @DefaultValue("servegate") String owner) {
    }

    /** The {@code kubernetes} container manager (fabric8; in-cluster service account or kubeconfig). */
    public record Kubernetes(
            /** Namespace of the model Deployments and pods; empty = the client's own (in a pod: the pod's). */
            @DefaultValue("") String namespace,
            /** The OIP gRPC port every model container listens on (its {@code PORT}). */
            @DefaultValue("8001") int containerPort,
            /** The pods' readiness probe: {@code grpc} (grpc.health.v1), {@code exec} (probe-command) or {@code none}. */
            @DefaultValue("grpc") String probe,
            @DefaultValue List<String> probeCommand,
            /** How often every watched pod is re-examined. */
            @DefaultValue("5m") Duration resync) {
    }
}

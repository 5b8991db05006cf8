package io.servegate.sdk;

import io.servegate.oip.client.TensorType;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.netty.NettyServerBuilder;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.InferParameter;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves one {@link Predictor}, or the models of a {@link ModelRepository}, as an Open Inference
 * Protocol (KServe v2) gRPC server, so that the gateway, Triton's and KServe's clients, or any
 * other OIP client can call it.
 *
 * <p>A repository's models are loaded on first use or on RepositoryModelLoad, unloaded on
 * RepositoryModelUnload, and the least recently used are unloaded when a load would exceed the
 * memory budget (see {@link Builder#memoryBudgetBytes}). A container of one predictor answers the
 * repository RPCs too: its model is always loaded and cannot be unloaded.
 *
 * <p>Every request is validated before the predictor sees it. Batches run on a fixed pool of
 * {@code concurrency} threads (one by default, as Clipper's containers do) behind a bounded
 * queue; a full queue is answered with RESOURCE_EXHAUSTED rather than growing without bound.
 * {@link #close()} (and SIGTERM, under {@link #runUntilShutdown()}) stops accepting new calls,
 * lets in-flight batches finish within the drain timeout, then stops.
 *
 * <p>A container of one predictor warms up before it is ready ({@link Warmup}): by default every
 * batch size up to {@link Builder#maxBatchSize} (1 when undeclared), twice each, on zeros of the
 * declared input length, and reports the times in its model metadata. ServerReady stays false
 * until then, so the gateway measures the model only once it is warm.
 *
 * <p>Besides OIP it serves the standard {@code grpc.health.v1.Health} service (what Kubernetes'
 * native {@code grpc} probe and most load balancers call): the overall status ({@code ""}) and
 * the OIP service's status are {@code SERVING} exactly while ServerReady is true, and
 * {@code NOT_SERVING} from the moment draining starts.
 *
 * @param <X> input type
 * @param <Y> output type
 */
public final class ModelContainer<X, Y> implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ModelContainer.class);
    /** ModelMetadata parameter: the largest batch the model takes, when declared (as the Python SDK's). */
    public static final String MAX_BATCH_SIZE = "servegate_max_batch_size";

    private final Server server;
    private final ThreadPoolExecutor predictPool;
    private final OipInferenceService<X, Y> service;
    private final ResidentModels<X, Y> models;
    private final HealthStatusManager health = new HealthStatusManager();
    private final Duration drainTimeout;
    private final String name;
    /** Null for a model repository: its models load later, on demand. */
    private final Warmup<X> warmup;
    private final Predictor<X, Y> predictor;

    private ModelContainer(Builder<X, Y> b) {
        this.name = b.name;
        this.predictor = b.predictor;
        this.warmup = b.predictor == null ? null
                : Warmup.plan(b.inputType, b.inputLength, b.maxBatchSize, b.warmupBatchSizes, b.warmupRuns, b.warmupInput);
        this.drainTimeout = b.drainTimeout;
        AtomicInteger threads = new AtomicInteger();
        this.predictPool = new ThreadPoolExecutor(b.concurrency, b.concurrency, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(b.maxQueuedBatches), r -> {
                    Thread t = new Thread(r, "predict-" + b.name + "-" + threads.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        if (b.predictor != null) {
            SingleModelRepository<X, Y> single = new SingleModelRepository<>(new ModelKey(b.name, b.version),
                    b.predictor, b.inputLength);
            this.models = new ResidentModels<>(single, Long.MAX_VALUE, Set.of(single.key()), b.name);
            models.load(single.key()).join();
        } else {
            this.models = new ResidentModels<>(b.repository, b.memoryBudgetBytes, Set.of(), b.name);
        }
        this.service = new OipInferenceService<>(b.inputType, b.outputType, models, predictPool, b.isolateRows);
        if (!b.inputDims.isEmpty()) {
            service.declareInputDims(b.inputDims);
        }
        if (b.maxBatchSize > 0) {
            service.reportInMetadata(Map.of(MAX_BATCH_SIZE, InferParameter.newBuilder().setInt64Param(b.maxBatchSize).build()));
        }
        this.server = NettyServerBuilder.forAddress(new InetSocketAddress(b.host, b.port))
                .maxInboundMessageSize(b.maxMessageBytes)
                // the trace context first (the last interceptor runs first): its log line and span see every call
                .addService(ServerInterceptors.intercept(ServerInterceptors.intercept(service, b.interceptors),
                        CallTracing.create()))
                .addService(health.getHealthService())
                .build();
    }

    /** A builder for a container serving {@code predictor}; it needs a name (and a version, default 1). */
    public static <X, Y> Builder<X, Y> builder(TensorType<X> inputType, TensorType<Y> outputType,
            Predictor<X, Y> predictor) {
        return new Builder<>(inputType, outputType, Objects.requireNonNull(predictor, "predictor"), null);
    }

    /**
     * A builder for a container serving the models of {@code repository} within
     * {@link Builder#memoryBudgetBytes}; the name only labels its threads and logs.
     */
    public static <X, Y> Builder<X, Y> builder(TensorType<X> inputType, TensorType<Y> outputType,
            ModelRepository<X, Y> repository) {
        return new Builder<>(inputType, outputType, null, Objects.requireNonNull(repository, "repository"))
                .name("models");
    }

    /**
     * Binds the port, warms the predictor up, and starts serving; the model is ready when this returns.
     *
     * @throws IOException when the port cannot be bound, or the warm-up fails (the container is then closed)
     */
    public ModelContainer<X, Y> start() throws IOException {
        server.start();
        if (warmup != null) {
            warmUp();
        }
        service.markReady();
        setHealth(ServingStatus.SERVING);
        LOG.info("'{}' serving Open Inference Protocol on port {}", name, port());
        return this;
    }

    /** Runs the warm-up on the predictor's own threads, so that it goes before any batch sent meanwhile. */
    private void warmUp() throws IOException {
        if (!warmup.active()) {
            LOG.info("'{}': no warm-up ({})", name, warmup.batchSizes().isEmpty() ? "off"
                    : "no input length declared to make up an input from, and no warm-up input given");
            return;
        }
        long start = System.nanoTime();
        try {
            Map<String, String> report = predictPool.submit(() -> warmup.run(predictor)).get();
            Map<String, InferParameter> parameters = new LinkedHashMap<>();
            report.forEach((k, v) -> parameters.put(k, InferParameter.newBuilder().setStringParam(v).build()));
            service.reportInMetadata(parameters);
            LOG.info("'{}' warmed up in {} ms: batch sizes {}, first runs {} ns, last runs {} ns", name,
                    (System.nanoTime() - start) / 1_000_000, report.get(Warmup.BATCH_SIZES),
                    report.get(Warmup.FIRST_NS), report.get(Warmup.LAST_NS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw new IOException("warm-up of '" + name + "' interrupted", e);
        } catch (ExecutionException e) {
            close();
            throw new IOException("warm-up of '" + name + "' failed: " + e.getCause().getMessage(), e.getCause());
        }
    }

    /** The bound port (useful after binding port 0). */
    public int port() {
        return server.getPort();
    }

    /**
     * Starts, prints {@code READY port=N} on standard output for whoever launched the process,
     * and blocks until the JVM is asked to stop; a shutdown hook drains in-flight batches.
     */
    public void runUntilShutdown() throws IOException, InterruptedException {
        start();
        Runtime.getRuntime().addShutdownHook(new Thread(this::close, "drain-" + name));
        System.out.println("READY port=" + port());
        System.out.flush();
        server.awaitTermination();
    }

    /** Stops accepting calls, waits for in-flight batches up to the drain timeout, then stops. */
    @Override
    public void close() {
        service.markNotReady();
        setHealth(ServingStatus.NOT_SERVING);
        server.shutdown();
        try {
            long deadline = System.nanoTime() + drainTimeout.toNanos();
            if (!server.awaitTermination(drainTimeout.toNanos(), TimeUnit.NANOSECONDS)) {
                LOG.warn("drain timeout of {} passed with calls still running; cancelling them", drainTimeout);
                server.shutdownNow();
            }
            predictPool.shutdown();
            predictPool.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            server.shutdownNow();
            Thread.currentThread().interrupt();
        }
        predictPool.shutdownNow();
        models.close();
    }

    private void setHealth(ServingStatus status) {
        health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, status);
        health.setStatus(GRPCInferenceServiceGrpc.SERVICE_NAME, status);
    }

    /** Configures a {@link ModelContainer}; {@link ContainerOptions} fills it from flags and env. */
    public static final class Builder<X, Y> {
        private final TensorType<X> inputType;
        private final TensorType<Y> outputType;
        private final Predictor<X, Y> predictor;
        private final ModelRepository<X, Y> repository;
        private long memoryBudgetBytes = Long.MAX_VALUE;
        private String name;
        private String version = "1";
        private String host = "0.0.0.0";
        private int port = 8001;
        private int inputLength = -1;
        private List<Long> inputDims = List.of();
        private int maxBatchSize;
        private List<Integer> warmupBatchSizes;
        private int warmupRuns = 2;
        private X warmupInput;
        private int maxMessageBytes = 16 * 1024 * 1024;
        private int concurrency = 1;
        private int maxQueuedBatches = 1024;
        private Duration drainTimeout = Duration.ofSeconds(30);
        private boolean isolateRows = true;
        private final List<ServerInterceptor> interceptors = new ArrayList<>();

        private Builder(TensorType<X> inputType, TensorType<Y> outputType, Predictor<X, Y> predictor,
                ModelRepository<X, Y> repository) {
            this.inputType = Objects.requireNonNull(inputType, "inputType");
            this.outputType = Objects.requireNonNull(outputType, "outputType");
            this.predictor = predictor;
            this.repository = repository;
        }

        /**
         * The bytes a repository's loaded models may take together, as the repository measures
         * them ({@link ModelRepository#sizeBytes}); unbounded by default. Ignored for one predictor.
         */
        public Builder<X, Y> memoryBudgetBytes(long memoryBudgetBytes) {
            this.memoryBudgetBytes = memoryBudgetBytes;
            return this;
        }

        public Builder<X, Y> name(String name) {
            this.name = name;
            return this;
        }

        public Builder<X, Y> version(String version) {
            this.version = version;
            return this;
        }

        public Builder<X, Y> host(String host) {
            this.host = host;
            return this;
        }

        public Builder<X, Y> port(int port) {
            this.port = port;
            return this;
        }

        /** The vector length every numeric input must have; unset (-1) accepts any. */
        public Builder<X, Y> inputLength(int inputLength) {
            this.inputLength = inputLength;
            return this;
        }

        /**
         * The shape of one input after the batch dimension (e.g. 3, 224, 224 for an image), declared
         * in ModelMetadata ({@code bytes}: as UINT8); sets {@link #inputLength} to the values it holds.
         */
        public Builder<X, Y> inputShape(List<Long> dims) {
            long values = 1;
            for (long d : dims) {
                if (d <= 0) {
                    throw new IllegalArgumentException("input dimensions must be positive, got " + dims);
                }
                values = Math.multiplyExact(values, d);
            }
            this.inputDims = List.copyOf(dims);
            this.inputLength = dims.isEmpty() ? -1 : Math.toIntExact(values);
            return this;
        }

        /**
         * The largest batch the model takes, reported in its metadata ({@code servegate_max_batch_size});
         * 0 (default) leaves it undeclared. The warm-up runs every size up to it by default.
         */
        public Builder<X, Y> maxBatchSize(int maxBatchSize) {
            this.maxBatchSize = maxBatchSize;
            return this;
        }

        /** The batch sizes the warm-up runs (default every size up to {@link #maxBatchSize}); empty turns it off. */
        public Builder<X, Y> warmupBatchSizes(List<Integer> sizes) {
            this.warmupBatchSizes = List.copyOf(sizes);
            return this;
        }

        /** How often the warm-up runs each size (default 2: the first is the cold cost, the last the warm one). */
        public Builder<X, Y> warmupRuns(int runs) {
            this.warmupRuns = runs;
            return this;
        }

        /** The input the warm-up's batches repeat (default zeros of the declared input length, for numeric and bytes types). */
        public Builder<X, Y> warmupInput(X input) {
            this.warmupInput = input;
            return this;
        }

        public Builder<X, Y> maxMessageBytes(int maxMessageBytes) {
            this.maxMessageBytes = maxMessageBytes;
            return this;
        }

        public Builder<X, Y> concurrency(int concurrency) {
            this.concurrency = concurrency;
            return this;
        }

        /** Batches that may wait for a predictor thread before requests get RESOURCE_EXHAUSTED. */
        public Builder<X, Y> maxQueuedBatches(int maxQueuedBatches) {
            this.maxQueuedBatches = maxQueuedBatches;
            return this;
        }

        public Builder<X, Y> drainTimeout(Duration drainTimeout) {
            this.drainTimeout = Objects.requireNonNull(drainTimeout, "drainTimeout");
            return this;
        }

        /**
         * Whether a batch the predictor raises on is split to find the rows it raises on, which are
         * then reported as per-row errors ({@code servegate_row_errors}, see
         * {@link io.servegate.oip.client.RowErrors}) while the other rows keep their outputs
         * (default). Off, such a batch fails as a whole: INVALID_ARGUMENT for an
         * {@link InvalidInputException}, INTERNAL otherwise.
         */
        public Builder<X, Y> isolateRows(boolean isolateRows) {
            this.isolateRows = isolateRows;
            return this;
        }

        /** Wraps the OIP service, e.g. to inject faults on the wire (the emulated container's {@code --fault}). */
        public Builder<X, Y> interceptor(ServerInterceptor interceptor) {
            interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
            return this;
        }

        /** Validates the configuration and builds the (not yet started) container. */
        public ModelContainer<X, Y> build() {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("a model name is required (--name or MODEL_NAME)");
            }
            if (version == null || version.isBlank()) {
                throw new IllegalArgumentException("a model version is required (--version or MODEL_VERSION)");
            }
            requirePositive("concurrency", concurrency);
            if (memoryBudgetBytes <= 0) {
                throw new IllegalArgumentException("memoryBudgetBytes must be positive, got " + memoryBudgetBytes);
            }
            requirePositive("maxMessageBytes", maxMessageBytes);
            requirePositive("maxQueuedBatches", maxQueuedBatches);
            if (maxBatchSize < 0) {
                throw new IllegalArgumentException("maxBatchSize must be 0 (undeclared) or positive, got " + maxBatchSize);
            }
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be in 0..65535, got " + port);
            }
            return new ModelContainer<>(this);
        }

        private static void requirePositive(String what, int value) {
            if (value <= 0) {
                throw new IllegalArgumentException(what + " must be positive, got " + value);
            }
        }
    }
}

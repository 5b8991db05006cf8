package io.servegate.sdk;

import picocli.CommandLine.Option;

/**
 * The options every model container takes, each with an environment default, as a picocli
 * mixin: {@code @Mixin ContainerOptions options;} in a container's command.
 */
public final class ContainerOptions {

    // picocli's mixinStandardHelpOptions would clash with --version (the model version), so help is declared here
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    @Option(names = "--name", defaultValue = "${env:MODEL_NAME}",
            description = "Model name (env MODEL_NAME); required unless the container serves a model repository.")
    String name;

    @Option(names = "--version", defaultValue = "${env:MODEL_VERSION:-1}",
            description = "Model version (env MODEL_VERSION, default ${DEFAULT-VALUE}).")
    String version;

    @Option(names = "--port", defaultValue = "${env:PORT:-8001}",
            description = "gRPC port, 0 for any free port (env PORT, default ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--host", defaultValue = "${env:HOST:-0.0.0.0}",
            description = "Address to bind (env HOST, default ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--max-message-bytes", defaultValue = "${env:MAX_MESSAGE_BYTES:-16777216}",
            description = "Largest request accepted; larger ones get RESOURCE_EXHAUSTED (default ${DEFAULT-VALUE}).")
    int maxMessageBytes;

    @Option(names = "--concurrency", defaultValue = "${env:CONCURRENCY:-1}",
            description = "Batches predicted at once (default ${DEFAULT-VALUE}).")
    int concurrency;

    @Option(names = "--drain-seconds", defaultValue = "${env:DRAIN_SECONDS:-30}",
            description = "On SIGTERM, how long in-flight batches may take to finish (default ${DEFAULT-VALUE}).")
    int drainSeconds;

    @Option(names = "--memory-budget-bytes", defaultValue = "${env:MEMORY_BUDGET_BYTES:-9223372036854775807}",
            description = "Bytes the loaded models of a model repository may take together; the least recently used "
                    + "are unloaded to stay within it (env MEMORY_BUDGET_BYTES, default unbounded).")
    long memoryBudgetBytes;

    @Option(names = "--max-batch-size", defaultValue = "${env:MAX_BATCH_SIZE:-0}",
            description = "Largest batch the model takes, reported in its metadata; 0 = undeclared (default ${DEFAULT-VALUE}).")
    int maxBatchSize;

    @Option(names = "--warmup-batch-sizes", defaultValue = "${env:WARMUP_BATCH_SIZES}",
            description = "Batch sizes to run before ready, e.g. 1,2,4, or none (env WARMUP_BATCH_SIZES; default every "
                    + "size up to --max-batch-size, 1 when undeclared).")
    String warmupBatchSizes;

    @Option(names = "--warmup-runs", defaultValue = "${env:WARMUP_RUNS:-2}",
            description = "Runs of each warm-up batch size (default ${DEFAULT-VALUE}).")
    int warmupRuns;

    /** The model name given, or null. */
    public String name() {
        return name;
    }

    /** The model version given (default 1). */
    public String version() {
        return version;
    }

    /** Applies these options to a builder; a missing name keeps the builder's (none for one predictor). */
    public <X, Y> ModelContainer.Builder<X, Y> applyTo(ModelContainer.Builder<X, Y> builder) {
        if (name != null) {
            builder.name(name);
        }
        if (warmupBatchSizes != null) {
            builder.warmupBatchSizes(Warmup.parseBatchSizes(warmupBatchSizes));
        }
        return builder.version(version).host(host).port(port).memoryBudgetBytes(memoryBudgetBytes)
                .maxMessageBytes(maxMessageBytes).concurrency(concurrency).maxBatchSize(maxBatchSize)
                .warmupRuns(warmupRuns).drainTimeout(java.time.Duration.ofSeconds(drainSeconds));
    }
}

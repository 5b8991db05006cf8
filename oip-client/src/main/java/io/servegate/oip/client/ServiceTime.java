package io.servegate.oip.client;

/**
 * Names of the response parameters through which a container reports how long the batch took
 * inside the predictor, so that the gateway can learn per-batch-size latency profiles
 * (Clockwork) without counting network time.
 */
public final class ServiceTime {

    /** int64 parameter: nanoseconds the container spent predicting the batch. */
    public static final String SERVICE_TIME_NS = "servegate_service_time_ns";

    /** int64 parameter: the batch size the predictor saw. */
    public static final String BATCH_SIZE = "servegate_batch_size";

    /**
     * int64 parameter, only on the answer to a batch that waited for its model to load: the
     * model's load time in nanoseconds (a cold start; the service time above excludes it).
     */
    public static final String LOAD_TIME_NS = "servegate_load_time_ns";

    private ServiceTime() {
    }
}

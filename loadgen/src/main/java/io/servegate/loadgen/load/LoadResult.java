package io.servegate.loadgen.load;

/**
 * One measured run of a workload at one setting.
 *
 * @param batchSize inputs per request
 * @param clients concurrent closed-loop clients (or, for open loop, the offered rate's driver count)
 * @param durationS the measured window, warm-up excluded
 * @param requests requests completed successfully inside the window
 * @param errors requests that failed inside the window
 * @param requestsPerSec successful requests per second
 * @param inputsPerSec successful predictions per second (throughput)
 * @param latency per-request latency, client-side, successful requests only; null if there were none
 * @param firstError the first failure's message, or null
 */
public record LoadResult(int batchSize, int clients, double durationS, long requests, long errors,
        double requestsPerSec, double inputsPerSec, LatencySummary latency, String firstError) {
}

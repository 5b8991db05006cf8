package io.servegate.loadgen.load;

/**
 * One measured open-loop run at one offered rate. Latency runs from each request's
 * <em>intended</em> send time (its place in the arrival schedule), not from when it was actually
 * sent, so a client or server that falls behind cannot hide its queueing (no coordinated
 * omission).
 *
 * @param offeredRate the target arrival rate, requests per second
 * @param durationS the measured window, warm-up excluded
 * @param scheduled requests whose intended send time fell in the window (the Poisson schedule's realisation)
 * @param scheduledRate scheduled / durationS
 * @param sentInWindow requests actually handed to the client during the window, wall clock
 * @param achievedSendRate sentInWindow / durationS: below scheduledRate when the client could not keep up
 * @param sendLagP50Ms median delay of the actual send behind the intended time, scheduled requests
 * @param sendLagP99Ms 99th percentile of that delay
 * @param sendLagMaxMs largest delay
 * @param requests scheduled requests that were answered successfully
 * @param errors scheduled requests that failed
 * @param unanswered scheduled requests still without an answer when the drain time ran out
 * @param requestsPerSec requests / durationS
 * @param latency intended send time to answer, successful requests only; null if there were none
 * @param firstError the first failure's message, or null
 */
public record OpenLoopResult(double offeredRate, double durationS, long scheduled, double scheduledRate,
        long sentInWindow, double achievedSendRate, double sendLagP50Ms, double sendLagP99Ms, double sendLagMaxMs,
        long requests, long errors, long unanswered, double requestsPerSec, LatencySummary latency,
        String firstError) {
}

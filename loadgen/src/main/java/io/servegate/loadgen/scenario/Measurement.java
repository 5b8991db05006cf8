package io.servegate.loadgen.scenario;

import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.LatencySummary;
import io.servegate.loadgen.load.LoadResult;
import io.servegate.loadgen.load.OpenLoopResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One measured run of a scenario, in the same terms for every scenario and target: what was
 * offered, what came back, goodput (predictions, not defaults, within the SLO) and latency.
 *
 * @param label the setting's name, e.g. {@code AIMD} or {@code 2 replicas}
 * @param setting the setting's parameters
 * @param offeredRate open loop: the mean arrival rate (requests/s); closed loop: null
 * @param clients closed loop: the clients; open loop: null
 * @param sentPerSec requests actually sent per second in the window
 * @param answeredPerSec successful answers (predictions and defaults) per second
 * @param goodputPerSec predictions within the SLO per second
 * @param sloMs the SLO goodput was counted against
 * @param requests requests measured: open loop, those scheduled in the window; closed loop, answered or failed
 * @param goodput predictions within the SLO
 * @param predictions answers that were predictions
 * @param defaults answers that were the app's default output
 * @param late answers slower than the SLO
 * @param errors failed requests
 * @param unanswered open loop: requests without an answer when the drain time ran out
 * @param latency client-side latency (open loop: from the intended send time), successful answers
 * @param sendLagP99Ms open loop: how far the load generator's sends lagged the schedule, p99
 * @param gatewaySide the gateway's own metrics over the run (latency, batch sizes); null if not scraped
 * @param firstError the first failure's message, or null
 */
public record Measurement(String label, Map<String, Object> setting, Double offeredRate, Integer clients,
        double sentPerSec, double answeredPerSec, double goodputPerSec, double sloMs, long requests, long goodput, long predictions, long defaults,
        long late, long errors, long unanswered, LatencySummary latency, Double sendLagP99Ms,
        GatewayMetrics.Summary gatewaySide, String firstError) {

    /** From an open-loop run and the answers its observer tallied (threshold = the SLO). */
    public static Measurement of(String label, Map<String, Object> setting, OpenLoopResult r, AnswerTally.Counts c,
            GatewayMetrics.Summary inside) {
        return new Measurement(label, setting, r.offeredRate(), null, r.achievedSendRate(), r.requestsPerSec(),
                c.goodput() / r.durationS(), c.lateThresholdMs(), r.scheduled(), c.goodput(), c.predictions(), c.defaults(),
                c.late(), r.errors(),
                r.unanswered(), r.latency(), r.sendLagP99Ms(), inside, r.firstError());
    }

    /** From a closed-loop run and the answers its observer tallied (threshold = the SLO). */
    public static Measurement of(String label, Map<String, Object> setting, LoadResult r, AnswerTally.Counts c,
            GatewayMetrics.Summary inside) {
        return new Measurement(label, setting, null, r.clients(), r.requestsPerSec() + r.errors() / r.durationS(),
                r.requestsPerSec(), c.goodput() / r.durationS(), c.lateThresholdMs(), r.requests() + r.errors(),
                c.goodput(), c.predictions(), c.defaults(),
                c.late(), r.errors(), 0, r.latency(), null, inside, r.firstError());
    }

    /** Goodput as a share of the requests measured, in percent; null with none. */
    public Double goodputPercent() {
        return requests == 0 ? null : 100.0 * goodput / requests;
    }

    /** The standard columns of a report table. */
    public static List<String> headers() {
        return List.of("setting", "offered/s", "clients", "sent/s", "answers/s", "goodput/s", "goodput %", "defaults",
                "late", "errors", "missed", "p50 ms", "p99 ms", "p99.9 ms", "mean batch");
    }

    /** This run as a table row under {@link #headers()}. */
    public List<Object> row() {
        List<Object> r = new ArrayList<>();
        r.add(label);
        r.add(offeredRate);
        r.add(clients);
        r.add(sentPerSec);
        r.add(answeredPerSec);
        r.add(goodputPerSec);
        r.add(goodputPercent());
        r.add(defaults);
        r.add(late);
        r.add(errors);
        r.add(unanswered);
        r.add(latency == null ? null : latency.p50Ms());
        r.add(latency == null ? null : latency.p99Ms());
        r.add(latency == null ? null : latency.p999Ms());
        r.add(gatewaySide == null ? null : gatewaySide.meanBatchSize());
        return r;
    }

    /** p99 in ms, null without answers. */
    public Double p99Ms() {
        return latency == null ? null : latency.p99Ms();
    }
}

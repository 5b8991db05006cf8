package io.servegate.loadgen.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.OpenLoopResult;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * One open-loop run against a running gateway: what was offered, and what came back within the
 * SLO, as defaults, as errors and how fast.
 *
 * @param startedAt when the run started (UTC, ISO-8601)
 * @param settings the command's settings
 * @param environment the machine and its load while the run ran
 * @param load the open-loop driver's result: scheduled, answered, errors, unanswered, latency percentiles
 * @param answers the answers by kind: predictions, defaults (by explanation), late, in time
 * @param goodputPerSec predictions within the SLO per second of the measured window
 */
public record DriveReport(String startedAt, Map<String, Object> settings, Map<String, Object> environment,
        OpenLoopResult load, AnswerTally.Counts answers, double goodputPerSec) {

    /** Writes the report as indented JSON. */
    public void writeJson(Path file) throws IOException {
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), this);
    }
}

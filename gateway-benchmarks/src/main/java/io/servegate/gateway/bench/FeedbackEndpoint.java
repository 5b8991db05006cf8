package io.servegate.gateway.bench;

/** Where a phase of the feedback-throughput benchmark sends its bodies, and what a successful answer contains. */
enum FeedbackEndpoint {
    UPDATE("update", "\"observed\":true"),
    PREDICT("predict", "\"default\":false");

    final String path;
    final String success;

    FeedbackEndpoint(String path, String success) {
        this.path = "/" + FeedbackThroughputBenchmark.APP + "/" + path;
        this.success = success;
    }
}

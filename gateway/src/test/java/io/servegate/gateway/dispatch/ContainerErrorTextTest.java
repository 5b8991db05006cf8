package io.servegate.gateway.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import org.junit.jupiter.api.Test;

/**
 * Regression (found by InputFuzzTest): a failed batch's reason reaches clients in
 * {@code default_explanation} and OIP 503 causes; grpc's {@code Status.toString()} embeds the
 * cause's whole stack trace, so the reason is built from code, description and message only.
 */
class ContainerErrorTextTest {

    @Test
    void theReasonNamesTheFailureWithoutAStackTrace() {
        Status status = Status.UNKNOWN.withDescription("container said no")
                .withCause(new IllegalArgumentException("vectors in one batch must have equal length: got 4 and 2"));
        assertThat(status.toString()).as("what the old text contained").contains("\tat ");
        String text = ReplicaWorker.describe(status);
        assertThat(text).isEqualTo("UNKNOWN: container said no (vectors in one batch must have equal length: got 4 and 2)");
        assertThat(ReplicaWorker.describe(Status.UNAVAILABLE)).isEqualTo("UNAVAILABLE");
    }
}

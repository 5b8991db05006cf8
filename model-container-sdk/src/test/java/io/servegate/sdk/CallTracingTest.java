package io.servegate.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The trace id a container logs is the one a well-formed W3C {@code traceparent} carries. */
class CallTracingTest {

    @Test
    void readsTheTraceIdOfAWellFormedTraceparentOnly() {
        assertThat(CallTracing.traceId("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
                .isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(CallTracing.traceId(null)).isNull();
        assertThat(CallTracing.traceId("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7")).isNull();
        assertThat(CallTracing.traceId("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01")).isNull();
        assertThat(CallTracing.traceId("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\nforged")).isNull();
    }
}

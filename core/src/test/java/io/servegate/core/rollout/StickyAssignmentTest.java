package io.servegate.core.rollout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class StickyAssignmentTest {

    @Test
    void aUserOnTheCandidateStaysOnItAsTheShareGrows() {
        int onAtOnePercent = 0;
        for (int u = 0; u < 100_000; u++) {
            String uid = "user-" + u;
            if (StickyAssignment.onCandidate("r", uid, 0.01)) {
                onAtOnePercent++;
                assertThat(StickyAssignment.onCandidate("r", uid, 0.05)).isTrue();
                assertThat(StickyAssignment.onCandidate("r", uid, 0.5)).isTrue();
            }
        }
        assertThat(onAtOnePercent / 100_000.0).isCloseTo(0.01, within(0.002));
    }

    @Test
    void sharesAreMetAndRolloutsDrawDifferentUsers() {
        int on = 0;
        int both = 0;
        for (int u = 0; u < 100_000; u++) {
            boolean a = StickyAssignment.onCandidate("a", "u" + u, 0.25);
            boolean b = StickyAssignment.onCandidate("b", "u" + u, 0.25);
            on += a ? 1 : 0;
            both += a && b ? 1 : 0;
        }
        assertThat(on / 100_000.0).isCloseTo(0.25, within(0.01));
        assertThat(both / 100_000.0).isCloseTo(0.0625, within(0.01));
        assertThat(StickyAssignment.onCandidate("a", "x", 0)).isFalse();
        assertThat(StickyAssignment.onCandidate("a", "x", 1)).isTrue();
        assertThat(StickyAssignment.point("a", "x")).isEqualTo(StickyAssignment.point("a", "x"));
    }
}

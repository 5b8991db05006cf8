package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.trace.RunRecorder;
import io.servegate.sim.report.Summary;
import io.servegate.sim.workload.Recording;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Replaying recordings: a hand-written one, and one written by the core's {@link RunRecorder}. */
class ReplayTest {

    private static final long MS = 1_000_000L;

    @TempDir
    Path dir;

    /**
     * One clockwork replica whose recorded batches took exactly 5 ms + 0.5 ms per query, with a
     * 0.5 ms round-trip overhead; five queries with a 20 ms SLO, the clock starting at 10 s.
     */
    private static final String RECORDING = """
            # servegate-recording v1
            model,resnet,clockwork,20000000
            replica,resnet,r0,1,10000000000
            arrival,resnet,10000000000,10020000000
            arrival,resnet,10001000000,10021000000
            arrival,resnet,10002000000,10022000000
            batch,resnet,r0,10000000000,1,5500000,6000000
            batch,resnet,r0,10001000000,2,6000000,6500000
            arrival,resnet,10030000000,10050000000
            arrival,resnet,10031000000,10051000000
            batch,resnet,r0,10030000000,4,7000000,7500000
            """;

    private SimResult replay(String text, PolicyKind policy) throws IOException {
        Path f = dir.resolve("run.csv");
        Files.writeString(f, text);
        return Simulation.run(Recording.read(f).scenario(policy, null, 1, 64));
    }

    @Test
    void aHandWrittenRecordingReplaysDeterministically() throws IOException {
        SimResult r = replay(RECORDING, null);
        assertThat(r.scenario().durationNanos()).isEqualTo(31 * MS);
        assertThat(r.models()).hasSize(1);
        assertThat(r.models().get(0).spec().config().policy()).isEqualTo(PolicyKind.CLOCKWORK);
        assertThat(r.total().arrived()).isEqualTo(5);
        assertThat(r.total().good()).isEqualTo(5);
        // clockwork sends the first query alone at once (the replica is idle), the next two together
        // when it is about to be free (an overhead ahead), then the fourth alone at once and the
        // fifth alone when the replica is about to be free again
        assertThat(r.total().batchSizes()[1]).isEqualTo(3);
        assertThat(r.total().batchSizes()[2]).isEqualTo(1);
        assertThat(r.total().latencyMs(0)).isEqualTo(6.0, org.assertj.core.data.Offset.offset(0.01));

        Map<String, Object> first = Summary.of(r);
        Map<String, Object> again = Summary.of(replay(RECORDING, null));
        first.remove("sim");
        again.remove("sim");
        assertThat(again).isEqualTo(first);
    }

    @Test
    void aLeadInReplaysUncountedAndTheLatencyModelDrawsFromWhatFollowsIt() throws IOException {
        Path f = dir.resolve("run.csv");
        Files.writeString(f, RECORDING);
        Recording recording = Recording.read(f);
        assertThat(recording.firstArrivalNanos()).isEqualTo(10_000 * MS);
        SimResult r = Simulation.run(recording.scenario(null, null, 1, 64, 10_030 * MS));
        assertThat(r.scenario().measureFromNanos()).isEqualTo(30 * MS);
        assertThat(r.scenario().settings()).containsEntry("lead_in_s", 0.03);
        assertThat(r.seconds()).isEqualTo(0.001);
        // the first three queries and their batches ran before it, uncounted
        assertThat(r.total().arrived()).isEqualTo(2);
        assertThat(r.total().good()).isEqualTo(2);
        assertThat(r.total().batches()).isEqualTo(2);
        // the one batch recorded after it, of 4 in 7 ms, is the only sample: a batch of one costs a quarter
        assertThat(r.total().latencyMs(0)).isEqualTo(0.5 + 1.75, org.assertj.core.data.Offset.offset(0.01));

        assertThatThrownBy(() -> recording.scenario(null, null, 1, 64, 10_031 * MS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nothing arrives after the lead-in");
        assertThat(Simulation.run(recording.scenario(null, null, 1, 64, 0)).total().arrived())
                .as("a start before the recording counts everything").isEqualTo(5);
    }

    @Test
    void anotherPolicyCanReplayTheSameArrivals() throws IOException {
        SimResult r = replay(RECORDING, PolicyKind.SYMPHONY);
        assertThat(r.models().get(0).spec().config().policy()).isEqualTo(PolicyKind.SYMPHONY);
        assertThat(r.total().good()).isEqualTo(5);
    }

    @Test
    void whatTheRecorderWritesTheSimulatorReplays() throws IOException {
        Path f = dir.resolve("recorded.csv");
        String model = "a,b%c";
        try (RunRecorder rec = RunRecorder.open(f)) {
            rec.model(model, PolicyKind.SYMPHONY, 20 * MS);
            rec.replica(model, "r0", 2, 0);
            rec.replica(model, "r1", 1, 0);
            for (int i = 0; i < 1_000; i++) {
                long t = i * MS;
                rec.arrival(model, t, t + 20 * MS);
                if (i % 5 == 0) {
                    rec.batch(model, i % 10 == 0 ? "r0" : "r1", t, 5, 7_500_000, 8_000_000);
                }
            }
            rec.removed(model, "r1", 600 * MS);
        }
        Recording recording = Recording.read(f);
        assertThat(recording.arrivals()).isEqualTo(1_000);
        SimResult r = Simulation.run(recording.scenario(null, null, 1, 64));
        assertThat(r.models().get(0).spec().name()).isEqualTo(model);
        assertThat(r.models().get(0).spec().replicas()).extracting(ReplicaSpec::concurrency).containsExactly(2, 1);
        assertThat(r.models().get(0).spec().replicas().get(1).failAtNanos()).isEqualTo(600 * MS);
        assertThat(r.models().get(0).spec().replicas().get(0).overheadNanos()).isEqualTo(500_000);
        assertThat(r.replicas().get(1).died()).isTrue();
        assertThat(r.total().good()).isGreaterThan(990);
    }
}

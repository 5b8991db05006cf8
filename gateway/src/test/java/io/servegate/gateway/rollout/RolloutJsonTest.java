package io.servegate.gateway.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.rollout.Guards;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutEvidence;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.core.rollout.VersionStats;
import io.servegate.core.selection.Task;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The stored form of rollouts and evidence, and rollouts stored by earlier gateways. */
class RolloutJsonTest {

    @Test
    void aWarmingRolloutAndItsEvidenceRoundTrip() {
        Rollout r = Rollout.start("m:2:x", "m", "2", "1", RolloutMode.CANARY, Task.CLASSIFICATION, 1,
                Guards.DEFAULTS, List.of(0.1, 1.0), 5);
        assertThat(RolloutJson.read(RolloutJson.write(r))).isEqualTo(r);
        RolloutEvidence e = new RolloutEvidence(new VersionStats(10, 1, 0, 4, 3, 2, 1.5),
                new VersionStats(90, 2, 1, 0, 0, 20, 3.0), 42);
        assertThat(RolloutJson.readEvidence(RolloutJson.writeEvidence(e))).isEqualTo(e);
    }

    @Test
    void aRolloutStoredBeforeWarmUpsAndTheRelativeSloGuardReadsAsOneWithoutWarmUp() {
        String stored = """
                {"v":1,"id":"m:2:x","model":"m","candidate":"2","baseline":"1","mode":"CANARY",
                 "task":"CLASSIFICATION","scale":1.0,"guards":{"max_slo_miss_rate":0.03,"max_error_rate":0.01,
                 "max_loss_increase":0.02,"min_feedback":200,"confidence":0.99,"min_step_queries":100,
                 "min_step_ms":10000},"steps":[0.1,1.0],"step":1,"status":"RUNNING","step_started_at_ms":7,
                 "step_start_queries":120,"history":[{"at_ms":5,"kind":"START","from":0.0,"to":0.1,
                 "reason":"canary"}]}""";
        Rollout r = RolloutJson.read(stored);
        assertThat(r.warming()).isFalse();
        assertThat(r.guards().warmupQueries()).isZero();
        assertThat(r.guards().maxSloMissIncrease()).isEqualTo(0.03);
        assertThat(r.share()).isEqualTo(1.0);
        String evidence = """
                {"v":1,"candidate":{"queries":1,"slo_misses":0,"errors":0,"compared":0,"agreements":0,
                 "feedback":0,"loss_sum":0.0},"baseline":{"queries":2,"slo_misses":0,"errors":0,"compared":0,
                 "agreements":0,"feedback":0,"loss_sum":0.0}}""";
        assertThat(RolloutJson.readEvidence(evidence).warmups()).isZero();
    }
}

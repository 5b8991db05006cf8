package io.servegate.gateway.batching;

import io.servegate.core.batching.FixedBatchingPolicy;
import io.servegate.core.batching.BatchLatencyProfile;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The deadline-aware batch choice of {@link BatchQueue}, on a profile of 10 + 2·b time units. */
class BatchQueueDeadlineAwareTest {

    private final BatchLatencyProfile profile = new BatchLatencyProfile(10, Long.MAX_VALUE);
    private final List<String> dropped = new ArrayList<>();

    private BatchQueue<String> queue(int maxBatch) {
        profile.record(1, 12, 0);
        profile.record(4, 18, 0);
        return new BatchQueue<>(new FixedBatchingPolicy(maxBatch), 0, 100, profile);
    }

    @Test
    void sendsTheLargestBatchWhoseTasksCanAllMakeTheirDeadlines() {
        BatchQueue<String> q = queue(4);
        // at t=0: a batch of 4 returns at 18, of 3 at 16, of 2 at 14, of 1 at 12
        q.offer("a", 15, 0);
        q.offer("b", 17, 0);
        q.offer("c", 30, 0);
        q.offer("d", 30, 0);
        // b=4 needs four tasks due >= 18: only c, d. b=3 needs three due >= 16: b, c, d.
        Batch<String> batch = q.tryDispatch(0, dropped::add);
        assertEquals(List.of("b", "c", "d"), batch.items());
        // a could make a batch of one, but only after this batch returns at 16: it is answered now
        assertEquals(List.of("a"), dropped);
        assertEquals(0, q.size());
    }

    @Test
    void keepsTasksThatArriveDueLaterThanTheBatchForTheNextOne() {
        BatchQueue<String> q = queue(2);
        q.offer("a", 20, 0);
        q.offer("b", 21, 0);
        q.offer("c", 40, 0);
        assertEquals(List.of("a", "b"), q.tryDispatch(0, dropped::add).items());
        assertEquals(List.of(), dropped);
        assertEquals(1, q.size());
    }

    @Test
    void whenNothingCanMakeItSendsTheTaskWithTheMostSlackAloneAsAProbe() {
        BatchQueue<String> q = queue(4);
        q.offer("a", 5, 0);
        q.offer("c", 11, 0);
        q.offer("b", 8, 0);
        // a batch of one returns at 12, after every deadline; the replica is idle, so the profile
        // (perhaps stale) is probed with the task that has the most slack
        assertEquals(List.of("c"), q.tryDispatch(0, dropped::add).items());
        assertEquals(List.of("a", "b"), dropped);
        assertEquals(0, q.size());
    }

    @Test
    void wakesTheDriverWhenTheEarliestTaskCanNoLongerBeServedAlone() {
        BatchQueue<String> q = new BatchQueue<>(new FixedBatchingPolicy(4), 10, 100, profile);
        profile.record(1, 12, 0);
        q.offer("a", 100, 0);
        // delayed batching holds it until 10, but it must go by 100 - 12 = 88 anyway
        assertEquals(10, q.nextDispatchTime(0));
        q.offer("b", 50, 5);
        assertEquals(10, q.nextDispatchTime(5));
        BatchQueue<String> tight = new BatchQueue<>(new FixedBatchingPolicy(4), 100, 100, profile);
        tight.offer("c", 50, 0);
        assertEquals(38, tight.nextDispatchTime(0));
    }

    @Test
    void learnsTheRoundTripNotTheLatencyGivenToThePolicy() {
        BatchLatencyProfile fresh = new BatchLatencyProfile(10, Long.MAX_VALUE);
        BatchQueue<String> q = new BatchQueue<>(new FixedBatchingPolicy(1), 0, 100, fresh);
        q.offer("a", 1_000, 0);
        Batch<String> b = q.tryDispatch(0, dropped::add);
        q.complete(b, 30, 10); // the container took 10, the round trip 30
        assertEquals(30, fresh.estimates(1, 30)[1]);
    }

    @Test
    void withoutSamplesBatchesAsClipperDoes() {
        BatchQueue<String> q = new BatchQueue<>(new FixedBatchingPolicy(3), 0, 100,
                new BatchLatencyProfile(10, Long.MAX_VALUE));
        q.offer("a", 1, 0);
        q.offer("b", 2, 0);
        assertEquals(List.of("a", "b"), q.tryDispatch(0, dropped::add).items());
    }
}

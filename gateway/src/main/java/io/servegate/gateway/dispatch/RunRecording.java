package io.servegate.gateway.dispatch;

import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.SchedulerConfig;
import io.servegate.core.trace.RunRecorder;

/** Records one model version's scheduler for the simulator's replay, under the name {@code model:version}. */
final class RunRecording implements DispatchListener {

    private final RunRecorder recorder;
    private final String model;

    RunRecording(RunRecorder recorder, String model, SchedulerConfig config) {
        this.recorder = recorder;
        this.model = model;
        recorder.model(model, config.policy(), config.sloNanos());
    }

    @Override
    public void arrived(long now, long deadline) {
        recorder.arrival(model, now, deadline);
    }

    @Override
    public void replicaAdded(String replica, long now) {
        recorder.replica(model, replica, 1, now);
    }

    @Override
    public void replicaRemoved(String replica, long now) {
        recorder.removed(model, replica, now);
    }

    @Override
    public void completed(Batch<PendingPrediction> batch, long serviceNanos, long now) {
        recorder.batch(model, batch.replica(), batch.sentAt(), batch.size(), serviceNanos, now - batch.sentAt());
    }
}

package io.servegate.core.scheduling;

/**
 * A model version to be loaded onto a multi-model replica (Clockwork's LOAD action), with what
 * the {@link MultiModelScheduler} predicted when it sent it. The replica runs it in order with
 * its batches, one thing at a time; the batch sent with it follows it. Recognised by identity
 * when it completes or fails.
 */
public final class Load {

    final SharedReplica target;
    private final String model;
    private final long sentAt;
    private final long predictedStart;
    private final long predictedFinish;

    Load(SharedReplica target, String model, long sentAt, long predictedStart, long predictedFinish) {
        this.target = target;
        this.model = model;
        this.sentAt = sentAt;
        this.predictedStart = predictedStart;
        this.predictedFinish = predictedFinish;
    }

    /** The replica that loads it. */
    public String replica() {
        return target.id();
    }

    /** The model version it loads. */
    public String model() {
        return model;
    }

    /** When it was sent, on the scheduler's clock. */
    public long sentAt() {
        return sentAt;
    }

    /** When the scheduler expected the replica to start loading. */
    public long predictedStart() {
        return predictedStart;
    }

    /** When the scheduler expected the model to be loaded: its start plus the model's load time. */
    public long predictedFinish() {
        return predictedFinish;
    }

    @Override
    public String toString() {
        return "load " + model + " on " + target.id();
    }
}

package io.servegate.core.scheduling;

/**
 * Clockwork's scheduler (OSDI'20, §4.3, §5), for one model: the lane that will be free earliest
 * gets its next batch shortly before it becomes free (ahead by the transport overhead, so the
 * container never idles for a round trip). Queries that could not be answered in time even
 * alone are rejected at once ({@link RejectReason#INFEASIBLE}); the batch is the largest run of
 * the earliest deadlines whose predicted answer comes before the earliest of them. It is
 * work-conserving and chooses by deadline, not by batch size: under overload its batches stay
 * small (Symphony §5.2.2 measures the same of Clockwork itself). For the same reason its batches
 * are not held to {@link TierBatchCap}.
 */
final class ClockworkPolicy implements SchedulingPolicy {

    @Override
    public int laneDepth() {
        return 2;
    }

    @Override
    public <P> void schedule(ModelScheduler<P> s, long now) {
        while (!s.queue.isEmpty()) {
            Slot slot = Slot.next(s, laneDepth(), now);
            if (slot == Slot.STOP) {
                return;
            }
            if (slot == Slot.AGAIN) {
                continue;
            }
            ReplicaProfile profile = slot.profile();
            long answerBase = slot.answerBase(); // a batch of b sent now answers at answerBase + service(b)
            Query<P> head;
            while ((head = s.queue.peek()) != null && head.deadline() < answerBase + profile.serviceNanos(1)) {
                s.reject(s.queue.poll(), RejectReason.INFEASIBLE);
            }
            if (head == null) {
                return;
            }
            int b = profile.sendable(
                    profile.largestWithin(head.deadline() - answerBase,
                            Math.min(s.queue.size(), Math.min(s.config().batchCap(), s.notDueCap(profile, now)))), now);
            s.send(slot.lane(), b, now, slot.start(), slot.start() + profile.serviceNanos(b));
        }
    }
}

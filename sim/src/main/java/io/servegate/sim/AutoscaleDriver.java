package io.servegate.sim;

import io.servegate.core.autoscaling.Autoscaler;
import io.servegate.core.autoscaling.ScalingDecision;
import io.servegate.core.autoscaling.ScalingSignals;
import io.servegate.core.scheduling.ModelScheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Carries out one model's autoscaler in virtual time, as the gateway carries it out through a
 * container manager: each tick it reads the scheduler's signals and asks the core's
 * {@link Autoscaler}; a scale-up starts replicas like the model's first, which join after the
 * start time; a scale-down drains the newest replicas (no new batches, leave once the last one
 * answers), the ones still starting first.
 */
final class AutoscaleDriver extends Event {

    private final SchedulerRun<ModelScheduler<Object>> model;
    private final Simulation sim;
    private final Autoscaling spec;
    private final Autoscaler autoscaler;
    private final ReplicaSpec template;
    private final SplittableRandom random;
    private final long durationNanos;
    /** Replicas paid for, oldest first: starting, serving or draining. */
    private final List<SimReplica> live = new ArrayList<>();
    private int next;
    private long lastTick;
    private long lastArrived;
    private long lastGood;

    AutoscaleDriver(ModelSpec modelSpec, SchedulerRun<ModelScheduler<Object>> model, Simulation sim,
            List<SimReplica> initial, SplittableRandom random, long durationNanos) {
        this.model = model;
        this.sim = sim;
        this.spec = modelSpec.autoscaling();
        this.autoscaler = new Autoscaler(spec.config());
        this.template = modelSpec.replicas().get(0);
        this.random = random;
        this.durationNanos = durationNanos;
        this.live.addAll(initial);
        this.next = initial.size();
        model.stats.scaling = new ScalingTrace();
    }

    @Override
    void fire(long now) {
        ScalingTrace trace = model.stats.scaling;
        live.removeIf(r -> r.left);
        double span = (now - lastTick) / 1e9;
        int ready = model.scheduler.availableReplicas();
        if (span > 0) {
            trace.samples.add(new ScalingTrace.Sample(now / 1e9, (model.stats.arrived - lastArrived) / span,
                    (model.stats.good - lastGood) / span, live.size(), ready));
        }
        trace.replicaSeconds += live.size() * Math.max(0, Math.min(now + spec.tickNanos(), durationNanos) - now) / 1e9;
        lastTick = now;
        lastArrived = model.stats.arrived;
        lastGood = model.stats.good;
        int replicas = (int) live.stream().filter(r -> !r.retiring).count();
        ScalingDecision d = autoscaler.decide(ScalingSignals.read(model.scheduler, replicas, autoscaler.config(), now));
        if (d != null) {
            trace.decisions.add(d);
            for (int i = replicas; i < d.to(); i++) {
                ReplicaSpec rs = new ReplicaSpec(template.id() + "+" + next++, template.concurrency(),
                        template.latency(), template.overheadNanos(), now + spec.startNanos(), Long.MAX_VALUE,
                        template.overheadSigma());
                live.add(sim.start(rs, model, random.split()));
            }
            for (int i = live.size() - 1, n = replicas; i >= 0 && n > d.to(); i--) {
                SimReplica r = live.get(i);
                if (!r.retiring) {
                    model.retire(r, now);
                    n--;
                }
            }
        }
        if (now + spec.tickNanos() < durationNanos) {
            sim.events().add(this, now + spec.tickNanos());
        }
    }
}

package io.servegate.sim;

import io.servegate.sim.workload.Workload;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A {@link QueryRouter} that sends each arrival to the model it names, as a plain run does, and
 * counts per second of arrival the queries that arrived and those answered in time: how goodput
 * evolves during a run, e.g. how soon it recovers from a pathology.
 */
final class WindowedGoodput implements QueryRouter {

    private static final long SECOND = 1_000_000_000L;

    private List<SchedulerRun<?>> models;
    private long[] arrived = new long[16];
    private long[] good = new long[16];

    /** What a query carries: when it arrived and its deadline. */
    private record Stamp(long arrival, long deadline) {
    }

    @Override
    public void attach(List<SchedulerRun<?>> runs, SplittableRandom random) {
        models = runs;
    }

    @Override
    public void arrived(Workload.Arrival arrival, long now) {
        int second = grow(now);
        arrived[second]++;
        SchedulerRun<?> run = models.get(arrival.model);
        run.submit(run.name, new Stamp(now, arrival.deadline), arrival.deadline, now);
    }

    @Override
    public void answered(SchedulerRun<?> model, Object payload, long now) {
        Stamp s = (Stamp) payload;
        if (now <= s.deadline()) {
            good[(int) (s.arrival() / SECOND)]++;
        }
    }

    /** Share of the queries arriving in {@code [fromS, toS)} seconds that were answered in time; NaN if none arrived. */
    double goodFraction(int fromS, int toS) {
        long a = 0;
        long g = 0;
        for (int s = Math.max(0, fromS); s < Math.min(toS, arrived.length); s++) {
            a += arrived[s];
            g += good[s];
        }
        return a == 0 ? Double.NaN : (double) g / a;
    }

    private int grow(long now) {
        int second = (int) (now / SECOND);
        if (second >= arrived.length) {
            arrived = Arrays.copyOf(arrived, Math.max(second + 1, arrived.length * 2));
            good = Arrays.copyOf(good, arrived.length);
        }
        return second;
    }
}

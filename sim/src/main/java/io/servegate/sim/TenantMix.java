package io.servegate.sim;

import io.servegate.core.scheduling.Priority;
import io.servegate.core.scheduling.Tenant;
import io.servegate.sim.workload.Workload;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntFunction;

/**
 * Apps sharing one model version: a {@link Scenario} of one model whose arrivals are split among
 * the apps in proportion to their loads, each query submitted for its app's {@link Tenant}, with
 * what happened to each app's queries and the model time each got. Also runs each app alone at
 * its own load, for comparison; or each app on a model of its own, the models sharing multi-model
 * replicas ({@link #runAcrossModels}).
 */
public final class TenantMix {

    /**
     * One app of the mix.
     *
     * @param load its offered rate as a multiple of the model's capacity
     */
    public record App(Tenant tenant, double load) {

        /**
         * Parses {@code NAME:PRIORITY[:WEIGHT]@LOAD}, e.g. {@code a:critical@0.5} or
         * {@code b:standard:3@1}.
         *
         * @throws IllegalArgumentException naming what is wrong
         */
        public static App parse(String spec) {
            int at = spec.lastIndexOf('@');
            String[] parts = (at < 0 ? spec : spec.substring(0, at)).split(":");
            if (at < 0 || parts.length < 2 || parts.length > 3 || parts[0].isEmpty()) {
                throw new IllegalArgumentException("app '" + spec + "': expected NAME:PRIORITY[:WEIGHT]@LOAD");
            }
            try {
                int weight = parts.length == 3 ? Integer.parseInt(parts[2]) : 1;
                double load = Double.parseDouble(spec.substring(at + 1));
                if (!(load > 0)) {
                    throw new IllegalArgumentException("app '" + spec + "': the load must be positive");
                }
                return new App(new Tenant(parts[0], Priority.parse(parts[1]), weight), load);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("app '" + spec + "': " + e.getMessage(), e);
            }
        }
    }

    /**
     * What one app's queries got.
     *
     * @param answeredLate  answered after their deadline
     * @param shedAtOnce    given the default before their deadline (rejected on arrival or when infeasible)
     * @param defaultLate   given the default at their deadline
     * @param modelNanos    the model time of the batches that answered them, shared equally by each batch's queries
     */
    public record AppResult(App app, long arrived, long good, long answeredLate, long shedAtOnce, long defaultLate,
            long modelNanos) {

        /** Share of its queries answered within the SLO. */
        public double inSlo() {
            return arrived == 0 ? 0 : (double) good / arrived;
        }
    }

    private TenantMix() {
    }

    /**
     * Runs {@code apps} on {@code scenario}'s one model; the scenario's rate must be their loads'
     * sum times capacity (its workload's arrivals are split among them in proportion to their loads).
     */
    public static List<AppResult> run(Scenario scenario, List<App> apps) {
        if (scenario.models().size() != 1 || apps.isEmpty()) {
            throw new IllegalArgumentException("a mix needs one model and at least one app");
        }
        Router router = new Router(apps, null);
        Simulation.run(scenario, router);
        return results(apps, router);
    }

    /**
     * Runs {@code apps} each on a model of its own, app i on {@code scenario}'s model i, the models
     * sharing its multi-model replicas; the scenario's rate must be the apps' loads' sum times
     * capacity, and it needs a model for each app.
     */
    public static List<AppResult> runAcrossModels(ManyModelScenario scenario, List<App> apps) {
        if (apps.isEmpty() || scenario.models() < apps.size()) {
            throw new IllegalArgumentException("a mix across models needs at least one app and a model for each");
        }
        Router router = new Router(apps, ManyModelScenario::id);
        Simulation.run(scenario, router);
        return results(apps, router);
    }

    private static List<AppResult> results(List<App> apps, Router router) {
        List<AppResult> out = new ArrayList<>();
        for (int i = 0; i < apps.size(); i++) {
            long[] c = router.counts[i];
            out.add(new AppResult(apps.get(i), c[0], c[1], c[2], c[3], c[4], c[5]));
        }
        return out;
    }

    /** Each arrival to one app, drawn by load; counts per app: arrived, good, late, shed at once, default at deadline, model time. */
    private static final class Router implements QueryRouter {
        private record Ticket(int app, long deadline) {
        }

        private final List<App> apps;
        /** The model app i's queries are for; null: the run's one model. */
        private final IntFunction<String> models;
        private final double[] cumulative;
        final long[][] counts;
        private SchedulerRun<?> run;
        private SplittableRandom random;

        Router(List<App> apps, IntFunction<String> models) {
            this.apps = apps;
            this.models = models;
            this.cumulative = new double[apps.size()];
            this.counts = new long[apps.size()][6];
            double sum = 0;
            for (App a : apps) {
                sum += a.load();
            }
            double acc = 0;
            for (int i = 0; i < apps.size(); i++) {
                acc += apps.get(i).load() / sum;
                cumulative[i] = acc;
            }
        }

        @Override
        public void attach(List<SchedulerRun<?>> runs, SplittableRandom r) {
            this.run = runs.get(0);
            this.random = r;
        }

        @Override
        public void arrived(Workload.Arrival arrival, long now) {
            double u = random.nextDouble();
            int i = 0;
            while (i < cumulative.length - 1 && u >= cumulative[i]) {
                i++;
            }
            counts[i][0]++;
            String model = models == null ? run.name : models.apply(i);
            run.submit(model, new Ticket(i, arrival.deadline), arrival.deadline, apps.get(i).tenant(), now);
        }

        @Override
        public void served(Object payload, long modelNanos) {
            counts[((Ticket) payload).app()][5] += modelNanos;
        }

        @Override
        public void answered(SchedulerRun<?> model, Object payload, long now) {
            Ticket t = (Ticket) payload;
            counts[t.app()][now <= t.deadline() ? 1 : 2]++;
        }

        @Override
        public void dropped(SchedulerRun<?> model, Object payload, long now) {
            Ticket t = (Ticket) payload;
            counts[t.app()][now < t.deadline() ? 3 : 4]++;
        }
    }
}

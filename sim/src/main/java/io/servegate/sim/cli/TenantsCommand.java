package io.servegate.sim.cli;

import io.servegate.sim.ManyModelScenario;
import io.servegate.sim.ModelPlacement;
import io.servegate.sim.TenantMix;
import io.servegate.sim.report.Environment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bin/sim tenants}: apps of different tiers and weights sharing one model version, each
 * app's offered load a multiple of {@code --rate} (the model's capacity); then each app alone at
 * its load. Prints and writes, per app, the share answered in the SLO, late answers, defaults at
 * once and at the deadline, its share of the model time, and its goodput against its goodput alone.
 */
@Command(name = "tenants", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Runs apps with priorities and weights on one shared model version, and each alone.")
final class TenantsCommand implements Callable<Integer> {

    @Mixin
    SimOptions options;

    @Mixin
    OutputOptions output;

    @Option(names = "--apps", split = ",", required = true,
            description = "apps as NAME:PRIORITY[:WEIGHT]@LOAD (priority critical, standard or sheddable; "
                    + "load a multiple of --rate), e.g. a:critical@0.5,b:sheddable@1.5")
    List<String> apps;

    @Option(names = "--across-models",
            description = "each app on a model of its own, the models (100 MB each) held by every one of --replicas "
                    + "multi-model replicas and scheduled by their planner, as clockwork (--policy does not apply; "
                    + "batches exact, transport constant): --rate is what the replicas serve of one model")
    boolean acrossModels;

    @Override
    public Integer call() throws Exception {
        List<TenantMix.App> mix = apps.stream().map(TenantMix.App::parse).toList();
        List<Map<String, Object>> rows = new ArrayList<>();
        List<Row> results = acrossModels ? runAcrossModels(options, mix) : run(options.builder(), options.rate, mix);
        for (Row row : results) {
            System.out.println(row.line());
            rows.add(row.json());
        }
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("apps", rows);
        summary.put("settings", options.builder().build().settings());
        summary.put("run", Environment.now());
        output.write("tenants", summary);
        return 0;
    }

    /** One app's result in the mix, beside its result alone, and its share of the mix's model time. */
    record Row(TenantMix.AppResult mixed, TenantMix.AppResult alone, double modelShare) {

        /** Goodput in the mix over goodput alone. */
        double ofAlone() {
            return alone.good() == 0 ? 0 : (double) mixed.good() / alone.good();
        }

        String line() {
            TenantMix.App a = mixed.app();
            return String.format(Locale.ROOT,
                    "%-10s %-9s w%-3d load %.2f  in SLO %6.2f %%  late %d  default at once %d, at deadline %d  "
                            + "model time %5.1f %%  goodput %.1f %% of alone (%.2f %% in SLO alone)",
                    a.tenant().app(), a.tenant().priority().wireName(), a.tenant().weight(), a.load(),
                    100 * mixed.inSlo(), mixed.answeredLate(), mixed.shedAtOnce(), mixed.defaultLate(),
                    100 * modelShare, 100 * ofAlone(), 100 * alone.inSlo());
        }

        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            TenantMix.App a = mixed.app();
            m.put("app", a.tenant().app());
            m.put("priority", a.tenant().priority().wireName());
            m.put("weight", a.tenant().weight());
            m.put("load", a.load());
            m.put("arrived", mixed.arrived());
            m.put("in_slo", mixed.inSlo());
            m.put("answered_late", mixed.answeredLate());
            m.put("default_at_once", mixed.shedAtOnce());
            m.put("default_at_deadline", mixed.defaultLate());
            m.put("model_time_share", modelShare);
            m.put("goodput_of_alone", ofAlone());
            m.put("in_slo_alone", alone.inSlo());
            return m;
        }
    }

    /** Runs {@code mix} at {@code capacity} queries/s per unit of load, then each app alone. */
    static List<Row> run(ScenarioBuilder builder, double capacity, List<TenantMix.App> mix) {
        double total = mix.stream().mapToDouble(TenantMix.App::load).sum();
        List<TenantMix.AppResult> mixed = TenantMix.run(builder.rate(total * capacity).build(), mix);
        return rows(mixed, app -> TenantMix.run(builder.rate(app.load() * capacity).build(), List.of(app)).get(0));
    }

    /** Runs {@code mix} with each app on a model of its own on shared replicas ({@code --across-models}), then each app alone. */
    static List<Row> runAcrossModels(SimOptions o, List<TenantMix.App> mix) {
        if (o.noiseSigma != 0 || o.overheadSigma != 0) {
            throw new IllegalArgumentException("--across-models runs exact batches and a constant transport: "
                    + "--noise-sigma and --overhead-sigma do not apply");
        }
        double total = mix.stream().mapToDouble(TenantMix.App::load).sum();
        double duration = o.durationS != null ? o.durationS : 10;
        ManyModelScenario scenario = new ManyModelScenario(ModelPlacement.STATIC, mix.size(), 0, o.replicas, mix.size(),
                100, 100, 1, o.betaMs, o.alphaMs, o.overheadMs, o.sloMs[0], total * o.rate, duration, o.seed);
        List<TenantMix.AppResult> mixed = TenantMix.runAcrossModels(scenario, mix);
        return rows(mixed, app -> TenantMix.runAcrossModels(scenario.withRate(app.load() * o.rate), List.of(app)).get(0));
    }

    private static List<Row> rows(List<TenantMix.AppResult> mixed, Function<TenantMix.App, TenantMix.AppResult> alone) {
        long modelNanos = mixed.stream().mapToLong(TenantMix.AppResult::modelNanos).sum();
        List<Row> rows = new ArrayList<>();
        for (TenantMix.AppResult r : mixed) {
            rows.add(new Row(r, alone.apply(r.app()), modelNanos == 0 ? 0 : (double) r.modelNanos() / modelNanos));
        }
        return rows;
    }
}

package io.servegate.loadgen.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.loadgen.load.LatencySummary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The {@code cpu-per-query} benchmark's results: per rate and server (the floor, the gateway and,
 * when given, a baseline gateway build), what the server process spent per answered query, beside
 * the latency the client saw and the machine's load average during the leg; and, per rate, each
 * server's CPU per query as a ratio to the floor's (and the gateway's to the baseline's, and
 * that of the gateway with tracing on to the gateway's with it off) in the same run.
 *
 * @param benchmark {@code cpu-per-query}
 * @param startedAt ISO-8601 instant
 * @param settings the command's options
 * @param environment the machine and JVM, load average at start and end
 * @param legs every measured leg, in the order run
 * @param ratios per rate and server, CPU and allocation per query over the floor's (medians over rounds)
 */
public record CpuPerQueryReport(String benchmark, String startedAt, Map<String, Object> settings,
        Map<String, Object> environment, List<Leg> legs, List<Map<String, Object>> ratios) {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /**
     * One server at one rate for one measured window.
     *
     * @param server {@code floor}, {@code gateway}, {@code baseline} or {@code tracing-<sampling ratio>}
     * @param round which round (0-based); servers take turns within a round
     * @param offeredRate requests per second offered (open loop)
     * @param achievedRate requests answered per second
     * @param answered requests answered successfully
     * @param errors requests that failed, or got no answer in time
     * @param onTimeShare answers (predictions) within the SLO over requests scheduled
     * @param cpuS the server process's CPU seconds in the window (user + system)
     * @param cpuUsPerQuery cpuS per answered query, microseconds
     * @param allocatedBytesPerQuery heap bytes the server allocated per answered query, -1 where unknown
     * @param latency intended send to answer, from the client
     * @param loadAverage /proc/loadavg at the end of the window
     */
    public record Leg(String server, int round, double offeredRate, double achievedRate, long answered, long errors,
            double onTimeShare, double cpuS, double cpuUsPerQuery, double allocatedBytesPerQuery,
            LatencySummary latency, String loadAverage) {
    }

    /** Medians over rounds of each server's CPU and allocation per query, and their ratios to the floor's and the baseline's. */
    public static List<Map<String, Object>> ratios(List<Leg> legs) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (double rate : legs.stream().map(Leg::offeredRate).distinct().toList()) {
            Map<String, Double> cpu = new LinkedHashMap<>();
            Map<String, Double> alloc = new LinkedHashMap<>();
            for (String server : legs.stream().map(Leg::server).distinct().toList()) {
                List<Leg> mine = legs.stream().filter(l -> l.offeredRate() == rate && l.server().equals(server)).toList();
                cpu.put(server, median(mine.stream().mapToDouble(Leg::cpuUsPerQuery).toArray()));
                alloc.put(server, median(mine.stream().mapToDouble(Leg::allocatedBytesPerQuery).toArray()));
            }
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("rate", rate);
            row.put("cpuUsPerQuery", cpu);
            row.put("allocatedBytesPerQuery", alloc);
            Double floor = cpu.get("floor");
            Double gateway = cpu.get("gateway");
            Double baseline = cpu.get("baseline");
            row.put("gatewayOverFloor", ratio(gateway, floor));
            row.put("baselineOverFloor", ratio(baseline, floor));
            row.put("gatewayOverBaseline", ratio(gateway, baseline));
            Map<String, Double> cpuOverGateway = new LinkedHashMap<>();
            Map<String, Double> allocOverGateway = new LinkedHashMap<>();
            cpu.keySet().stream().filter(s -> s.startsWith("tracing-")).forEach(s -> {
                cpuOverGateway.put(s, ratio(cpu.get(s), gateway));
                allocOverGateway.put(s, ratio(alloc.get(s), alloc.get("gateway")));
            });
            if (!cpuOverGateway.isEmpty()) {
                row.put("tracingCpuOverGateway", cpuOverGateway);
                row.put("tracingAllocOverGateway", allocOverGateway);
            }
            out.add(row);
        }
        return out;
    }

    private static Double ratio(Double a, Double b) {
        return a == null || b == null || !(b > 0) ? null : a / b;
    }

    static double median(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] v = values.clone();
        java.util.Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /** Writes {@code dir/<benchmark>.json} and returns it. */
    public Path writeJson(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve(benchmark + ".json");
        JSON.writeValue(file.toFile(), this);
        return file;
    }

    /** Every leg, then the ratios, as fixed-width text. */
    public String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%7s %-12s %5s %9s %8s %9s %10s %10s %8s %8s  %s%n", "rate", "server",
                "round", "answered/s", "on-time", "CPU us/q", "alloc B/q", "errors", "p50 ms", "p99 ms", "load avg"));
        for (Leg l : legs) {
            sb.append(String.format(Locale.ROOT, "%7.0f %-12s %5d %9.1f %7.1f%% %9.1f %10.0f %10d %8s %8s  %s%n",
                    l.offeredRate(), l.server(), l.round(), l.achievedRate(), 100 * l.onTimeShare(), l.cpuUsPerQuery(),
                    l.allocatedBytesPerQuery(), l.errors(), ms(l.latency() == null ? null : l.latency().p50Ms()),
                    ms(l.latency() == null ? null : l.latency().p99Ms()), l.loadAverage()));
        }
        for (Map<String, Object> r : ratios) {
            sb.append(String.format(Locale.ROOT, "rate %.0f: CPU us/query %s, alloc B/query %s; gateway/floor %s, "
                    + "baseline/floor %s, gateway/baseline %s%n", (Double) r.get("rate"), r.get("cpuUsPerQuery"),
                    r.get("allocatedBytesPerQuery"), fmt(r.get("gatewayOverFloor")), fmt(r.get("baselineOverFloor")),
                    fmt(r.get("gatewayOverBaseline"))));
            if (r.containsKey("tracingCpuOverGateway")) {
                sb.append(String.format(Locale.ROOT, "rate %.0f, tracing on over off: CPU/query %s, alloc/query %s%n",
                        (Double) r.get("rate"), r.get("tracingCpuOverGateway"), r.get("tracingAllocOverGateway")));
            }
        }
        return sb.toString();
    }

    private static String fmt(Object ratio) {
        return ratio == null ? "-" : String.format(Locale.ROOT, "%.2fx", (Double) ratio);
    }

    private static String ms(Double value) {
        return value == null ? "-" : String.format(Locale.ROOT, "%.2f", value);
    }
}

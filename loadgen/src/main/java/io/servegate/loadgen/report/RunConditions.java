package io.servegate.loadgen.report;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What else was going on while a benchmark ran: the machine's load average (other processes
 * share the cores) and this JVM's own CPU and garbage-collection time. Recorded at the start and
 * end of a run so that a noisy result can be recognised as such.
 *
 * @param loadAverage1m the 1-minute load average, or -1 where unknown
 * @param loadAverage the text of /proc/loadavg where there is one
 * @param loadgenCpuS CPU seconds this JVM has used so far
 * @param loadgenGcCount garbage collections in this JVM so far
 * @param loadgenGcMs milliseconds spent in them
 */
public record RunConditions(double loadAverage1m, String loadAverage, double loadgenCpuS, long loadgenGcCount,
        long loadgenGcMs) {

    /** The conditions now. */
    public static RunConditions now() {
        double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        String proc = null;
        try {
            Path p = Path.of("/proc/loadavg");
            if (Files.isReadable(p)) {
                proc = Files.readString(p).trim();
            }
        } catch (Exception e) {
            proc = null;
        }
        double cpu = -1;
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            cpu = os.getProcessCpuTime() / 1e9;
        }
        long count = 0;
        long ms = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, gc.getCollectionCount());
            ms += Math.max(0, gc.getCollectionTime());
        }
        return new RunConditions(load, proc, cpu, count, ms);
    }

    /**
     * CPU seconds all of the machine's cores have spent neither idle nor waiting for I/O since boot,
     * every process together (the first line of /proc/stat, in 1/100 s); NaN where there is none.
     */
    public static double machineBusyCpuS() {
        try {
            Path p = Path.of("/proc/stat");
            if (!Files.isReadable(p)) {
                return Double.NaN;
            }
            String[] f = Files.readAllLines(p).get(0).trim().split("\\s+");
            long total = 0;
            // cpu user nice system idle iowait irq softirq steal [guest guest_nice, already counted in user and nice]
            for (int i = 1; i < Math.min(f.length, 9); i++) {
                total += Long.parseLong(f[i]);
            }
            return (total - Long.parseLong(f[4]) - Long.parseLong(f[5])) / 100.0;
        } catch (Exception e) {
            return Double.NaN;
        }
    }

    /** Start and end conditions, for a report's environment. */
    public static Map<String, Object> span(RunConditions start, RunConditions end) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("loadAverageAtStart", start.loadAverage() != null ? start.loadAverage() : start.loadAverage1m());
        m.put("loadAverageAtEnd", end.loadAverage() != null ? end.loadAverage() : end.loadAverage1m());
        m.put("loadgenCpuS", end.loadgenCpuS() - start.loadgenCpuS());
        m.put("loadgenGcCount", end.loadgenGcCount() - start.loadgenGcCount());
        m.put("loadgenGcMs", end.loadgenGcMs() - start.loadgenGcMs());
        return m;
    }
}

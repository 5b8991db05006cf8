package io.servegate.loadgen.harness;

import com.sun.management.ThreadMXBean;
import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * What a child JVM has spent so far: CPU seconds from {@code /proc/<pid>/stat} (user + system,
 * every thread, the JIT and the collector included) and bytes its threads have allocated on the
 * heap (its {@code com.sun.management.ThreadMXBean}, read over the JVM's local management agent,
 * which this class starts through the attach API). Two readings' difference is the cost of what
 * happened in between. Closing it closes the management connection only.
 */
public final class ProcessCost implements AutoCloseable {

    /** Clock ticks per second of {@code /proc/<pid>/stat}'s times ({@code getconf CLK_TCK}; 100 on Linux). */
    private static final double TICKS_PER_SECOND = 100.0;

    private final long pid;
    private final JMXConnector jmx;
    private final ThreadMXBean threads;

    private ProcessCost(long pid, JMXConnector jmx, ThreadMXBean threads) {
        this.pid = pid;
        this.jmx = jmx;
        this.threads = threads;
    }

    /**
     * Watches the JVM of process {@code pid}; without the attach API (another user's JVM, or one
     * started with {@code -XX:+DisableAttachMechanism}) only its CPU time is read.
     */
    public static ProcessCost of(long pid) {
        try {
            VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
            String address;
            try {
                address = vm.startLocalManagementAgent();
            } finally {
                vm.detach();
            }
            JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address));
            MBeanServerConnection connection = connector.getMBeanServerConnection();
            ThreadMXBean bean = ManagementFactory.newPlatformMXBeanProxy(connection,
                    ManagementFactory.THREAD_MXBEAN_NAME, ThreadMXBean.class);
            return new ProcessCost(pid, connector, bean);
        } catch (Exception | LinkageError e) {
            return new ProcessCost(pid, null, null);
        }
    }

    /** A reading now. */
    public Reading read() {
        return new Reading(cpuSeconds(pid), allocatedBytes());
    }

    private long allocatedBytes() {
        try {
            return threads == null ? -1 : threads.getTotalThreadAllocatedBytes();
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** User + system CPU seconds of process {@code pid}, all its threads; NaN where there is no /proc. */
    public static double cpuSeconds(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            // the command name (field 2) is in parentheses and may hold spaces: count from after it
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
            // fields 14 and 15 (utime, stime) are the 12th and 13th after the name
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS_PER_SECOND;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    @Override
    public void close() {
        if (jmx != null) {
            try {
                jmx.close();
            } catch (IOException e) {
                // the process may be gone already; nothing to release
            }
        }
    }

    /**
     * @param cpuS CPU seconds so far
     * @param allocatedBytes heap bytes allocated so far by the live threads and those that ended, -1 where unknown
     */
    public record Reading(double cpuS, long allocatedBytes) {

        /** What was spent from {@code earlier} to this reading. */
        public Reading minus(Reading earlier) {
            long bytes = allocatedBytes < 0 || earlier.allocatedBytes < 0 ? -1 : allocatedBytes - earlier.allocatedBytes;
            return new Reading(cpuS - earlier.cpuS, bytes);
        }
    }
}

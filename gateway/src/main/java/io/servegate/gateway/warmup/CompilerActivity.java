package io.servegate.gateway.warmup;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * How busy the JIT compilers were between two looks. A round of calls can take a steady time
 * while C2 is still compiling the path (its code runs profiled until then, and on a small machine
 * the compiler threads take cores the first real queries need), so the warm-up also waits for the
 * compilers to go quiet. Where the JVM does not report compilation time, they count as quiet.
 */
final class CompilerActivity {

    private final CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    private final boolean measured = jit != null && jit.isCompilationTimeMonitoringSupported();
    private long lastMillis = total();

    /** Whether the compilers spent at most {@code fraction} of {@code roundNanos} compiling since the last look. */
    boolean quiet(long roundNanos, double fraction) {
        long now = total();
        long spentMillis = now - lastMillis;
        lastMillis = now;
        return !measured || spentMillis * 1_000_000 <= fraction * roundNanos;
    }

    private long total() {
        return measured ? jit.getTotalCompilationTime() : 0;
    }
}

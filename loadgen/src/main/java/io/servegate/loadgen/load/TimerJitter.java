package io.servegate.loadgen.load;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.servegate.loadgen.cli.LoadGen;
import io.servegate.loadgen.harness.GatewayProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * The machine's own scheduling floor: how late a bare timer thread, doing nothing else, runs.
 * Run in a JVM of its own beside a benchmark, it says how much of the gateway's lateness any
 * thread on this machine would have suffered in the same window: a gateway cannot answer
 * within SLO + x ms more reliably than the operating system wakes a thread within x ms.
 *
 * <p>One thread sleeps until a due time 1 to 2 periods after it last woke (random, so that it
 * does not lock step with other periodic work) and records how long after that time it woke:
 * the same timed wait (a futex) that a scheduled executor's worker sleeps in.
 */
public final class TimerJitter {

    private static final ObjectMapper JSON = new ObjectMapper();

    private TimerJitter() {
    }

    /**
     * @param timers   timers that ran
     * @param p50Ms    lateness quantiles, ms
     * @param p99Ms    99th percentile
     * @param p999Ms   99.9th percentile
     * @param maxMs    the latest
     * @param over1Ms  timers that ran more than 1 ms late
     * @param over2Ms  more than 2 ms late
     * @param over4Ms  more than 4 ms late
     */
    public record Result(long timers, double p50Ms, double p99Ms, double p999Ms, double maxMs, long over1Ms,
            long over2Ms, long over4Ms) {

        /** The share of timers more than 2 ms late. */
        @JsonIgnore
        public double over2MsShare() {
            return timers == 0 ? 0 : (double) over2Ms / timers;
        }
    }

    /**
     * Measures on the calling thread for {@code duration}: it sleeps until each due time, 1 to 2
     * {@code period}s after it last woke, and records how late it woke.
     */
    public static Result measure(Duration duration, Duration period, long seed) throws InterruptedException {
        Histogram lateness = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        SplittableRandom random = new SplittableRandom(seed);
        long periodNanos = period.toNanos();
        long end = System.nanoTime() + duration.toNanos();
        for (long now = System.nanoTime(); now < end; ) {
            long due = now + periodNanos + random.nextLong(periodNanos);
            while ((now = System.nanoTime()) < due) {
                LockSupport.parkNanos(due - now);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            lateness.recordValue(Math.min(now - due, lateness.getHighestTrackableValue()));
        }
        return new Result(lateness.getTotalCount(), ms(lateness.getValueAtPercentile(50)),
                ms(lateness.getValueAtPercentile(99)), ms(lateness.getValueAtPercentile(99.9)),
                ms(lateness.getMaxValue()), over(lateness, 1), over(lateness, 2), over(lateness, 4));
    }

    /** Timers later than {@code ms}, to the histogram's resolution (3 significant digits). */
    private static long over(Histogram h, long ms) {
        return h.getTotalCount() - h.getCountBetweenValues(0, TimeUnit.MILLISECONDS.toNanos(ms));
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    /** The result as one line of JSON, as the {@code timer-jitter} command prints it. */
    public static String toJson(Result r) throws IOException {
        return JSON.writeValueAsString(r);
    }

    /**
     * A measurement running in a JVM of its own (this one's class path), so that this JVM's
     * garbage collections and threads do not count against the machine.
     */
    public static final class Child {

        private final Process process;

        private Child(Process process) {
            this.process = process;
        }

        /** Starts measuring now, for {@code duration}. */
        public static Child start(Duration duration) throws IOException {
            List<String> cmd = new ArrayList<>(List.of(GatewayProcess.currentJava(), "-Xmx64m", "-cp",
                    System.getProperty("java.class.path"), LoadGen.class.getName(), "timer-jitter",
                    "--duration-s", Double.toString(duration.toMillis() / 1000.0)));
            return new Child(new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start());
        }

        /** Waits for the result; null if the child failed or took {@code grace} longer than asked. */
        public Result await(Duration grace) throws InterruptedException {
            try (BufferedReader out = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS) || process.exitValue() != 0) {
                    return null;
                }
                String line = out.readLine();
                return line == null ? null : JSON.readValue(line, Result.class);
            } catch (IOException e) {
                return null;
            } finally {
                process.destroyForcibly();
            }
        }
    }
}

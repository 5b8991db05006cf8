package io.servegate.benchmarks;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.core.cache.CacheKey;
import io.servegate.core.cache.PredictionCache;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * {@link PredictionCache#get}: the hit path over a warm cache of 10,000 MNIST-sized inputs
 * (784 float32 values, 3,136 bytes, as the gateway keys them: the encoded input bytes), and the
 * miss path with a computation that is already complete.
 *
 * <ul>
 *   <li>{@link #hit}: the looked-up key is equal to, but not the same object as, the cached one,
 *       so every lookup compares the 3,136 input bytes; its input's hash code is cached after the
 *       first pass over the keys.</li>
 *   <li>{@link #hitFreshKey}: as a request does, builds a new key (copying the
 *       input bytes) and {@link CacheKey} per lookup, so the hash of the input is computed every
 *       time too.</li>
 *   <li>{@link #miss}: a new input every time (a counter written into a copy of a base input),
 *       inserted into a cache with the gateway's default bound (32 MB), which in steady state
 *       evicts one entry per insertion (Caffeine's maintenance runs on the common pool).</li>
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PredictionCacheBenchmark {

    static final int KEYS = 10_000;
    static final int FLOATS = 784;
    static final String MODEL = "mnist-mlp";
    static final String VERSION = "1";

    static final Function<CacheKey, CompletableFuture<String>> COMPUTE =
            k -> CompletableFuture.completedFuture("7");

    static byte[] randomInput(SplittableRandom random) {
        ByteBuffer buf = ByteBuffer.allocate(FLOATS * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < FLOATS; i++) {
            // Pixel intensities in [0, 1], about 80% of them 0 as in MNIST.
            buf.putFloat(random.nextInt(5) == 0 ? random.nextInt(256) / 255f : 0f);
        }
        return buf.array();
    }

    /** A warm cache holding every one of {@link #KEYS} inputs. */
    @State(Scope.Benchmark)
    public static class Warm {
        PredictionCache cache;
        /** The raw input bytes, to build fresh keys from. */
        byte[][] inputs;
        /** Keys equal to the cached ones but distinct objects (distinct arrays). */
        CacheKey[] lookups;

        @Setup
        public void setUp() {
            // 10,000 entries of ~3.3 KB: 64 MB holds all of them (the default 32 MB would not).
            cache = new PredictionCache(true, 64L << 20, new SimpleMeterRegistry());
            SplittableRandom random = new SplittableRandom(42);
            inputs = new byte[KEYS][];
            lookups = new CacheKey[KEYS];
            for (int i = 0; i < KEYS; i++) {
                inputs[i] = randomInput(random);
                cache.get(new CacheKey(MODEL, VERSION, inputs[i].clone()), COMPUTE).join();
                lookups[i] = new CacheKey(MODEL, VERSION, inputs[i].clone());
            }
            for (CacheKey k : lookups) {
                if (cache.getIfPresent(k) == null) {
                    throw new IllegalStateException("warm-up key not cached; the cache bound is too small");
                }
            }
        }
    }

    /** Per-thread position in the key set, stepping by a stride coprime to KEYS. */
    @State(Scope.Thread)
    public static class Cursor {
        int next;

        int next() {
            int i = next;
            next = (i + 7_919) % KEYS;
            return i;
        }
    }

    /** A cache at the gateway's default bound, fed a new input per operation. */
    @State(Scope.Thread)
    public static class Cold {
        PredictionCache cache;
        byte[] base;
        long counter;

        @Setup
        public void setUp() {
            cache = new PredictionCache(true, 32L << 20, new SimpleMeterRegistry());
            base = randomInput(new SplittableRandom(7));
        }

        CacheKey nextKey() {
            byte[] input = base.clone();
            long c = ++counter;
            for (int i = 0; i < Long.BYTES; i++) {
                input[i] = (byte) (c >>> (8 * i));
            }
            return new CacheKey(MODEL, VERSION, input.clone());
        }
    }

    @Benchmark
    public CompletableFuture<String> hit(Warm warm, Cursor cursor) {
        return warm.cache.get(warm.lookups[cursor.next()], COMPUTE);
    }

    @Benchmark
    public CompletableFuture<String> hitFreshKey(Warm warm, Cursor cursor) {
        CacheKey key = new CacheKey(MODEL, VERSION, warm.inputs[cursor.next()].clone());
        return warm.cache.get(key, COMPUTE);
    }

    @Benchmark
    public CompletableFuture<String> miss(Cold cold) {
        return cold.cache.get(cold.nextKey(), COMPUTE);
    }
}

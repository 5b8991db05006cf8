package io.servegate.benchmarks;

import io.servegate.core.selection.Combined;
import io.servegate.core.selection.Exp3Policy;
import io.servegate.core.selection.Exp4Policy;
import io.servegate.core.selection.StateCodec;
import io.servegate.core.selection.WeightedState;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The selection policies' select / combine / observe, and the state codec that the Redis state
 * store pays on every update (a decode of the stored state and an encode of the new one).
 *
 * <p>Four linked models classify into labels "0".."9" with accuracies 95%, 85%, 70% and 30%;
 * 10% of the ensemble's answers lack one model (a straggler). The states were trained on 200
 * feedbacks first, so their weights are not uniform. The benchmarks read the same states and do
 * not carry the result of {@code observe} over, so every invocation does the same work; the
 * samples (outputs and labels) cycle through 1,024 pre-generated ones.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class SelectionBenchmark {

    static final List<String> MODELS = List.of("mlp-a", "mlp-b", "cnn-c", "linear-d");
    static final double[] ACCURACY = {0.95, 0.85, 0.70, 0.30};
    static final int SAMPLES = 1024; // a power of two
    static final int TRAINING = 200;

    final Exp3Policy exp3 = new Exp3Policy();
    final Exp4Policy exp4 = new Exp4Policy();
    final StateCodec<WeightedState> codec = exp4.codec();

    WeightedState exp3State;
    WeightedState exp4State;
    byte[] exp4Encoded;
    String[] labels;
    /** All four models' outputs (sometimes three), as the ensemble gets them. */
    Map<String, String>[] ensembleOutputs;
    /** The output of the one model Exp3 queried. */
    Map<String, String>[] singleOutputs;
    int next;

    @Setup
    @SuppressWarnings("unchecked")
    public void setUp() {
        SplittableRandom random = new SplittableRandom(3);
        labels = new String[SAMPLES];
        ensembleOutputs = new Map[SAMPLES];
        singleOutputs = new Map[SAMPLES];
        for (int s = 0; s < SAMPLES; s++) {
            int label = random.nextInt(10);
            labels[s] = Integer.toString(label);
            Map<String, String> outputs = new HashMap<>();
            int straggler = random.nextInt(10) == 0 ? random.nextInt(MODELS.size()) : -1;
            for (int m = 0; m < MODELS.size(); m++) {
                if (m != straggler) {
                    int out = random.nextDouble() < ACCURACY[m] ? label : (label + 1 + random.nextInt(9)) % 10;
                    outputs.put(MODELS.get(m), Integer.toString(out));
                }
            }
            ensembleOutputs[s] = outputs;
            String one = MODELS.get(random.nextInt(MODELS.size()));
            String out = outputs.getOrDefault(one, labels[s]);
            singleOutputs[s] = Map.of(one, out);
        }
        exp3State = exp3.init(MODELS);
        exp4State = exp4.init(MODELS);
        for (int s = 0; s < TRAINING; s++) {
            exp3State = exp3.observe(exp3State, null, labels[s], singleOutputs[s]);
            exp4State = exp4.observe(exp4State, null, labels[s], ensembleOutputs[s]);
        }
        exp4Encoded = codec.encode(exp4State);
    }

    private int sample() {
        int s = next;
        next = (s + 1) & (SAMPLES - 1);
        return s;
    }

    @Benchmark
    public List<String> exp3Select() {
        return exp3.select(exp3State, null, ThreadLocalRandom.current());
    }

    @Benchmark
    public WeightedState exp3Observe() {
        int s = sample();
        return exp3.observe(exp3State, null, labels[s], singleOutputs[s]);
    }

    @Benchmark
    public List<String> exp4Select() {
        return exp4.select(exp4State, null, ThreadLocalRandom.current());
    }

    @Benchmark
    public Optional<Combined> exp4Combine() {
        return exp4.combine(exp4State, null, ensembleOutputs[sample()], MODELS);
    }

    @Benchmark
    public WeightedState exp4Observe() {
        int s = sample();
        return exp4.observe(exp4State, null, labels[s], ensembleOutputs[s]);
    }

    @Benchmark
    public byte[] codecEncode() {
        return codec.encode(exp4State);
    }

    @Benchmark
    public WeightedState codecDecode() {
        return codec.decode(exp4Encoded);
    }
}

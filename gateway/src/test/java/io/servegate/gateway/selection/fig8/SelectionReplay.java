package io.servegate.gateway.selection.fig8;

import io.servegate.containers.onnx.FashionMnist;
import io.servegate.containers.onnx.OnnxPredictor;
import io.servegate.core.selection.SelectionPolicy;
import io.servegate.sim.selection.RecordedOutputs;
import io.servegate.sim.selection.SelectionQuery;
import io.servegate.sim.selection.SelectionRun;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntPredicate;

/**
 * A test-scope replay of Clipper's model-selection experiments (NSDI'17 §5, Figures 8 and 10) on
 * the real ONNX Fashion-MNIST classifiers: no gateway, no containers. The predict/feedback loop is
 * the simulator's {@link SelectionRun}, which drives the {@link SelectionPolicy} functions as
 * {@link io.servegate.gateway.query.SelectionService} drives them, with <em>immediate</em>
 * feedback after every query; this class supplies its queries and its feedback model, a
 * {@link RecordedOutputs} table of the real models' answers.
 *
 * <p>Every model's prediction on all 10,000 test images is computed once per JVM with
 * {@link OnnxPredictor}. A {@link #scenario} then fixes, from its seed, the image sequence (a
 * seeded shuffle, reshuffled on every pass over the set), the user of each query (its context),
 * and each model's output per query, where a {@link Corruption} replaces a model's answers by
 * uniformly random labels {@code 0..9} drawn from a generator of the scenario's own (independent
 * of the policy's generator). Every policy and every static model of one scenario sees the very
 * same (corrupted) outputs.
 */
final class SelectionReplay {

    static final Path MODELS_DIR = Path.of("../containers/onnx/models");
    static final String CNN = "fmnist-cnn";
    static final String MLP = "fmnist-mlp";
    static final String LOGREG = "fmnist-logreg";
    static final String TINY = "fmnist-tiny";
    /** All four models, best (about 8% test error) to worst (about 29%). */
    static final List<String> ALL_MODELS = List.of(CNN, MLP, LOGREG, TINY);

    private static final int BATCH = 500;
    private static final String[] LABELS = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
    private static final Map<String, int[]> PREDICTIONS = new ConcurrentHashMap<>();

    private SelectionReplay() {
    }

    /** Model {@code model}'s predicted class for every test image, computed once per JVM. */
    static int[] predictions(String model) {
        return PREDICTIONS.computeIfAbsent(model, SelectionReplay::predict);
    }

    private static int[] predict(String model) {
        FashionMnist data = FashionMnist.testSet();
        List<float[]> images = data.images();
        int[] out = new int[images.size()];
        try (OnnxPredictor predictor = new OnnxPredictor(MODELS_DIR.resolve(model + ".onnx"))) {
            for (int from = 0; from < images.size(); from += BATCH) {
                List<String> labels = predictor.predictBatch(images.subList(from, Math.min(images.size(), from + BATCH)));
                for (int i = 0; i < labels.size(); i++) {
                    out[from + i] = Integer.parseInt(labels.get(i).trim());
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot run " + model, e);
        }
        return out;
    }

    /**
     * Replaces {@code model}'s outputs by uniformly random labels for the queries in
     * {@code [from, to)} whose user matches {@code users}.
     */
    record Corruption(String model, int from, int to, IntPredicate users) {

        /** For every user. */
        static Corruption window(String model, int from, int to) {
            return new Corruption(model, from, to, u -> true);
        }

        /** For the whole run, for the users matching {@code users}. */
        static Corruption forUsers(String model, IntPredicate users) {
            return new Corruption(model, 0, Integer.MAX_VALUE, users);
        }

        boolean applies(int query, int user) {
            return query >= from && query < to && users.test(user);
        }
    }

    /**
     * One fixed query sequence with its (possibly corrupted) model outputs, ready to replay
     * through any policy.
     *
     * @param models      the linked models, in link order
     * @param queries     how many queries
     * @param userCount   how many users (each query belongs to one drawn uniformly, its context);
     *                    1 for none
     * @param seed        fixes the image order, the users and the corrupted outputs
     * @param corruptions which outputs to replace by random labels
     */
    static SelectionRun scenario(List<String> models, int queries, int userCount, long seed,
            List<Corruption> corruptions) {
        FashionMnist data = FashionMnist.testSet();
        int n = data.size();
        int[][] predictions = new int[models.size()][];
        for (int m = 0; m < models.size(); m++) {
            predictions[m] = predictions(models.get(m));
        }
        SplittableRandom order = new SplittableRandom(seed);
        SplittableRandom userDraw = new SplittableRandom(seed ^ 0x5DEECE66DL);
        SplittableRandom noise = new SplittableRandom(~seed);
        List<SelectionQuery> sequence = new ArrayList<>(queries);
        String[][] outputs = new String[queries][models.size()];
        int[] perm = new int[n];
        for (int q = 0; q < queries; q++) {
            if (q % n == 0) {
                shuffle(perm, order);
            }
            int image = perm[q % n];
            int user = userCount <= 1 ? 0 : userDraw.nextInt(userCount);
            sequence.add(new SelectionQuery(image, Integer.toString(user), LABELS[data.label(image)]));
            for (int m = 0; m < models.size(); m++) {
                boolean corrupt = false;
                for (Corruption c : corruptions) {
                    corrupt |= c.model().equals(models.get(m)) && c.applies(q, user);
                }
                outputs[q][m] = LABELS[corrupt ? noise.nextInt(10) : predictions[m][image]];
            }
        }
        return new SelectionRun(models, sequence, new RecordedOutputs(models, outputs));
    }

    private static void shuffle(int[] perm, SplittableRandom random) {
        for (int i = 0; i < perm.length; i++) {
            perm[i] = i;
        }
        for (int i = perm.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
    }
}

package io.servegate.gateway.selection.fig8;

import io.servegate.containers.onnx.FashionMnist;
import io.servegate.containers.onnx.OnnxPredictor;
import io.servegate.core.selection.Combined;
import io.servegate.core.selection.SelectionPolicy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntPredicate;
import java.util.random.RandomGenerator;

/**
 * A test-scope replay of Clipper's model-selection experiments (NSDI'17 §5, Figures 8 and 10) on
 * the real ONNX Fashion-MNIST classifiers: no gateway, no containers, just the
 * {@link SelectionPolicy} functions driven exactly as
 * {@link io.servegate.gateway.query.SelectionService} drives them, with <em>immediate</em>
 * feedback after every query.
 *
 * <p>Per query {@code q} (image {@code images[q]}, user {@code users[q]}), on the state of the
 * query's context (the user's own state in per-user mode, one shared state otherwise):
 * <ol>
 *   <li>predict: {@code state = link(state, models)}; {@code selected = select(state, input,
 *       random)}; {@code combine(state, input, outputs of the selected models, selected)}. The
 *       query is an error when the combined output is not the true label, or when there is no
 *       combined output (the gateway would answer the app's default);</li>
 *   <li>feedback, joined with that prediction as the gateway joins it (§5.2.1): {@code state =
 *       observe(state, input, label, outputs of the selected models, the probability each was
 *       selected with)}: Exp3 learns only from the model that answered, Exp4 from all.</li>
 * </ol>
 *
 * <p>Every model's prediction on all 10,000 test images is computed once per JVM with
 * {@link OnnxPredictor}. A {@link Scenario} then fixes, from its seed, the image sequence (a
 * seeded shuffle, reshuffled on every pass over the set), the user of each query, and each
 * model's output per query, where a {@link Corruption} replaces a model's answers by uniformly
 * random labels {@code 0..9} drawn from a generator of the scenario's own (independent of the
 * policy's generator). Every policy and every static model of one scenario sees the very same
 * (corrupted) outputs.
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

    /** A cumulative error-rate curve: {@link #at(int)} is the error rate over queries {@code 0..q}. */
    static final class Curve {
        private final String name;
        private final int[] cumulativeErrors;

        Curve(String name, boolean[] errors) {
            this.name = name;
            this.cumulativeErrors = new int[errors.length];
            int sum = 0;
            for (int q = 0; q < errors.length; q++) {
                sum += errors[q] ? 1 : 0;
                cumulativeErrors[q] = sum;
            }
        }

        String name() {
            return name;
        }

        int queries() {
            return cumulativeErrors.length;
        }

        /** The cumulative error rate after query {@code q} (over queries {@code 0..q}). */
        double at(int q) {
            return cumulativeErrors[q] / (double) (q + 1);
        }

        /** The cumulative error rate after the last query. */
        double last() {
            return at(cumulativeErrors.length - 1);
        }

        /** The error rate over the queries {@code [from, to)} alone. */
        double window(int from, int to) {
            int before = from == 0 ? 0 : cumulativeErrors[from - 1];
            return (cumulativeErrors[to - 1] - before) / (double) (to - from);
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s: %.4f", name, last());
        }
    }

    /** One fixed query sequence with its (possibly corrupted) model outputs. */
    static final class Scenario {
        private final List<String> models;
        private final int[] images;
        private final int[] users;
        private final String[] labels;
        /** outputs[q][m]: model m's answer to query q. */
        private final String[][] outputs;

        private Scenario(List<String> models, int[] images, int[] users, String[] labels, String[][] outputs) {
            this.models = models;
            this.images = images;
            this.users = users;
            this.labels = labels;
            this.outputs = outputs;
        }

        /**
         * @param models      the linked models, in link order
         * @param queries     how many queries
         * @param userCount   how many users (each query belongs to one drawn uniformly); 1 for none
         * @param seed        fixes the image order, the users and the corrupted outputs
         * @param corruptions which outputs to replace by random labels
         */
        static Scenario of(List<String> models, int queries, int userCount, long seed, List<Corruption> corruptions) {
            FashionMnist data = FashionMnist.testSet();
            int n = data.size();
            int[][] predictions = new int[models.size()][];
            for (int m = 0; m < models.size(); m++) {
                predictions[m] = predictions(models.get(m));
            }
            SplittableRandom order = new SplittableRandom(seed);
            SplittableRandom userDraw = new SplittableRandom(seed ^ 0x5DEECE66DL);
            SplittableRandom noise = new SplittableRandom(~seed);
            int[] images = new int[queries];
            int[] users = new int[queries];
            String[] labels = new String[queries];
            String[][] outputs = new String[queries][models.size()];
            int[] perm = new int[n];
            for (int q = 0; q < queries; q++) {
                if (q % n == 0) {
                    shuffle(perm, order);
                }
                int image = perm[q % n];
                images[q] = image;
                users[q] = userCount <= 1 ? 0 : userDraw.nextInt(userCount);
                labels[q] = LABELS[data.label(image)];
                for (int m = 0; m < models.size(); m++) {
                    boolean corrupt = false;
                    for (Corruption c : corruptions) {
                        corrupt |= c.model().equals(models.get(m)) && c.applies(q, users[q]);
                    }
                    outputs[q][m] = LABELS[corrupt ? noise.nextInt(10) : predictions[m][image]];
                }
            }
            return new Scenario(List.copyOf(models), images, users, labels, outputs);
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

        List<String> models() {
            return models;
        }

        int queries() {
            return images.length;
        }

        /** The error curve of always answering with {@code model}'s (possibly corrupted) output. */
        Curve staticModel(String model) {
            int m = models.indexOf(model);
            if (m < 0) {
                throw new IllegalArgumentException(model + " is not in " + models);
            }
            boolean[] errors = new boolean[images.length];
            for (int q = 0; q < images.length; q++) {
                errors[q] = !outputs[q][m].equals(labels[q]);
            }
            return new Curve(model, errors);
        }

        /** The curves of all static models, in model order. */
        List<Curve> staticModels() {
            List<Curve> curves = new ArrayList<>();
            for (String m : models) {
                curves.add(staticModel(m));
            }
            return curves;
        }

        /**
         * Replays the scenario through {@code policy}.
         *
         * @param name    the curve's name
         * @param seed    seeds the policy's generator (select draws)
         * @param perUser one state per user (Clipper §5.3 contexts) instead of one shared state
         */
        <S> Curve run(String name, SelectionPolicy<S> policy, long seed, boolean perUser) {
            RandomGenerator random = new SplittableRandom(seed);
            Map<Integer, S> states = new HashMap<>();
            boolean[] errors = new boolean[images.length];
            for (int q = 0; q < images.length; q++) {
                Integer context = perUser ? users[q] : 0;
                S state = states.get(context);
                state = policy.link(state == null ? policy.init(models) : state, models);
                Integer input = images[q];
                String label = labels[q];

                // predict: the models the policy selects, combined
                List<String> selected = policy.select(state, input, random);
                Optional<Combined> combined = policy.combine(state, input, outputsOf(q, selected), selected);
                errors[q] = combined.isEmpty() || !combined.get().output().trim().equals(label);

                // immediate feedback on the models that answered, weighted by how likely each was drawn
                Map<String, Double> probabilities = new HashMap<>();
                for (String m : selected) {
                    probabilities.put(m, policy.probability(state, m));
                }
                states.put(context, policy.observe(state, input, label, outputsOf(q, selected), probabilities));
            }
            return new Curve(name, errors);
        }

        private Map<String, String> outputsOf(int q, List<String> selected) {
            Map<String, String> out = new HashMap<>();
            for (String s : selected) {
                int m = models.indexOf(s);
                if (m >= 0) {
                    out.put(s, outputs[q][m]);
                }
            }
            return out;
        }
    }

    /** A compact table of curves: final cumulative error and the error rate per window. */
    static String table(String title, List<Curve> curves, int... boundaries) {
        StringBuilder sb = new StringBuilder(title).append('\n');
        sb.append(String.format(Locale.ROOT, "  %-22s %9s", "", "cumul."));
        for (int i = 0; i + 1 < boundaries.length; i++) {
            sb.append(String.format(Locale.ROOT, " %13s", "[" + boundaries[i] + "," + boundaries[i + 1] + ")"));
        }
        sb.append('\n');
        for (Curve c : curves) {
            sb.append(String.format(Locale.ROOT, "  %-22s %9.4f", c.name(), c.last()));
            for (int i = 0; i + 1 < boundaries.length; i++) {
                sb.append(String.format(Locale.ROOT, " %13.4f", c.window(boundaries[i], boundaries[i + 1])));
            }
            sb.append('\n');
        }
        return sb.toString();
    }
}

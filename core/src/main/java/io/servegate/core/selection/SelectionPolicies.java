package io.servegate.core.selection;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Creates the built-in selection policies by name, e.g. from an application's configuration.
 *
 * <table>
 *   <caption>Policies and their parameters</caption>
 *   <tr><th>name</th><th>parameters (defaults)</th></tr>
 *   <tr><td>{@code single} (the default)</td><td>none</td></tr>
 *   <tr><td>{@code exp3}</td><td>{@code eta} (0.1), {@code gamma} (0.05), {@code task}
 *       ({@code classification}), {@code scale} (1.0)</td></tr>
 *   <tr><td>{@code exp4}</td><td>{@code eta} (0.1), {@code task} ({@code classification}),
 *       {@code tolerance} (0.1), {@code scale} (1.0)</td></tr>
 * </table>
 * Numeric parameters may be given as numbers or numeric strings, {@code task} as a {@link Task}
 * or its name ({@code classification} / {@code regression}, any case).
 */
public final class SelectionPolicies {

    /** The name of the default policy, {@link SingleModelPolicy}. */
    public static final String DEFAULT = SingleModelPolicy.NAME;
    /** The names {@link #create} accepts. */
    public static final List<String> NAMES = List.of(SingleModelPolicy.NAME, Exp3Policy.NAME, Exp4Policy.NAME);

    private static final Set<String> EXP3_PARAMS = Set.of("eta", "gamma", "task", "scale");
    private static final Set<String> EXP4_PARAMS = Set.of("eta", "task", "tolerance", "scale");

    private SelectionPolicies() {
    }

    /**
     * @param name   a policy name from {@link #NAMES} (case and surrounding blanks ignored);
     *               null or blank means {@link #DEFAULT}
     * @param params the policy's parameters; null means none
     * @return a new policy (or the shared {@link SingleModelPolicy#INSTANCE})
     * @throws IllegalArgumentException naming the accepted values for an unknown name, an unknown
     *                                  parameter, or an invalid parameter value
     */
    public static SelectionPolicy<?> create(String name, Map<String, ?> params) {
        String n = name == null || name.isBlank() ? DEFAULT : name.trim().toLowerCase(Locale.ROOT);
        Map<String, ?> p = params == null ? Map.of() : params;
        switch (n) {
            case SingleModelPolicy.NAME -> {
                if (!p.isEmpty()) {
                    throw new IllegalArgumentException("selection policy 'single' takes no parameters, got "
                            + new TreeSet<>(p.keySet()));
                }
                return SingleModelPolicy.INSTANCE;
            }
            case Exp3Policy.NAME -> {
                checkKnown(n, p, EXP3_PARAMS);
                return new Exp3Policy(
                        number(n, p, "eta", Exp3Policy.DEFAULT_ETA),
                        number(n, p, "gamma", Exp3Policy.DEFAULT_GAMMA),
                        task(n, p),
                        number(n, p, "scale", Exp3Policy.DEFAULT_SCALE));
            }
            case Exp4Policy.NAME -> {
                checkKnown(n, p, EXP4_PARAMS);
                return new Exp4Policy(
                        number(n, p, "eta", Exp4Policy.DEFAULT_ETA),
                        task(n, p),
                        number(n, p, "tolerance", Exp4Policy.DEFAULT_TOLERANCE),
                        number(n, p, "scale", Exp4Policy.DEFAULT_SCALE));
            }
            default -> throw new IllegalArgumentException("unknown selection policy '" + name
                    + "'; accepted: " + String.join(", ", NAMES));
        }
    }

    private static void checkKnown(String policy, Map<String, ?> params, Set<String> accepted) {
        for (String key : params.keySet()) {
            if (!accepted.contains(key)) {
                throw new IllegalArgumentException("unknown parameter '" + key + "' for selection policy '"
                        + policy + "'; accepted: " + String.join(", ", new TreeSet<>(accepted)));
            }
        }
    }

    private static double number(String policy, Map<String, ?> params, String key, double fallback) {
        Object v = params.get(key);
        if (v == null) {
            return fallback;
        }
        if (v instanceof Number num) {
            return num.doubleValue();
        }
        if (v instanceof String s) {
            try {
                return Double.parseDouble(s.trim());
            } catch (NumberFormatException e) {
                // fall through to the message below
            }
        }
        throw new IllegalArgumentException("parameter '" + key + "' of selection policy '" + policy
                + "' must be a number, got '" + v + "'");
    }

    private static Task task(String policy, Map<String, ?> params) {
        Object v = params.get("task");
        if (v == null) {
            return Task.CLASSIFICATION;
        }
        if (v instanceof Task t) {
            return t;
        }
        try {
            return Task.parse(v.toString());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("parameter 'task' of selection policy '" + policy + "': "
                    + e.getMessage(), e);
        }
    }
}

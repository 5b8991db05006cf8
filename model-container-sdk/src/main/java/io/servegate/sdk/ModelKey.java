package io.servegate.sdk;

import java.util.Comparator;
import java.util.Objects;

/** One model version a container can serve: the OIP model name and version. */
public record ModelKey(String name, String version) {

    /** Versions compare as numbers when both are numbers (so 10 follows 9), otherwise as text. */
    public static final Comparator<String> VERSION_ORDER = (a, b) -> {
        if (isNumber(a) && isNumber(b)) {
            int byLength = Integer.compare(a.length(), b.length());
            return byLength != 0 ? byLength : a.compareTo(b);
        }
        return a.compareTo(b);
    };

    /** By name, then by version in {@link #VERSION_ORDER}. */
    public static final Comparator<ModelKey> ORDER = Comparator.comparing(ModelKey::name)
            .thenComparing(ModelKey::version, VERSION_ORDER);

    public ModelKey {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(version, "version");
        if (name.isBlank() || version.isBlank()) {
            throw new IllegalArgumentException("a model needs a name and a version, got '" + name + "' version '"
                    + version + "'");
        }
    }

    private static boolean isNumber(String s) {
        return !s.isEmpty() && s.chars().allMatch(Character::isDigit) && (s.length() == 1 || s.charAt(0) != '0');
    }

    @Override
    public String toString() {
        return "'" + name + "' version '" + version + "'";
    }
}

package io.servegate.gateway.registry;

import java.util.Arrays;
import java.util.function.Function;
import java.util.stream.Collectors;

/** Parses the lower-case wire names of the pipeline enums, naming the accepted ones on failure. */
final class WireNames {

    private WireNames() {
    }

    static <E> E parse(E[] values, Function<E, String> wireName, String name, E fallback,
            String field) {
        if (name == null) {
            if (fallback == null) {
                throw new IllegalArgumentException("'" + field + "' is missing");
            }
            return fallback;
        }
        for (E e : values) {
            if (wireName.apply(e).equals(name)) {
                return e;
            }
        }
        throw new IllegalArgumentException("'" + field + "' must be one of "
                + Arrays.stream(values).map(wireName).collect(Collectors.joining(", ")) + "; got '" + name + "'");
    }
}

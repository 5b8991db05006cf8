package io.servegate.sim.latency;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one replica costs per hour on each hardware kind: the planner's cost table.
 *
 * <p>JSON ({@link #read}): {@code {"per_replica_hour": {"cpu-1t": 0.05, "cpu-2t": 0.09, "cuda": 0.9}}}.
 * Kinds are free names; they must match the kinds of the model profiles.
 *
 * @param perHour price per replica-hour by hardware kind, each {@code > 0}
 */
public record HardwareCosts(Map<String, Double> perHour) {

    public HardwareCosts {
        perHour = Collections.unmodifiableMap(new LinkedHashMap<>(perHour));
        if (perHour.isEmpty()) {
            throw new IllegalArgumentException("the cost table names no hardware kind");
        }
        perHour.forEach((kind, price) -> {
            if (!(price > 0) || Double.isInfinite(price)) {
                throw new IllegalArgumentException("cost of '" + kind + "' must be > 0, got " + price);
            }
        });
    }

    /** Reads the JSON format above. */
    public static HardwareCosts read(Path file) throws IOException {
        JsonNode table = new ObjectMapper().readTree(file.toFile()).get("per_replica_hour");
        if (table == null || !table.isObject()) {
            throw new IOException(file + ": expected {\"per_replica_hour\": {KIND: PRICE, …}}");
        }
        Map<String, Double> m = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : table.properties()) {
            if (!e.getValue().isNumber()) {
                throw new IOException(file + ": price of '" + e.getKey() + "' must be a number, got " + e.getValue());
            }
            m.put(e.getKey(), e.getValue().asDouble());
        }
        try {
            return new HardwareCosts(m);
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    /** The price of one replica-hour on {@code kind}. */
    public double perReplicaHour(String kind) {
        Double p = perHour.get(kind);
        if (p == null) {
            throw new IllegalArgumentException("no cost for hardware kind '" + kind + "'; the table has " + perHour.keySet());
        }
        return p;
    }

    public boolean has(String kind) {
        return perHour.containsKey(kind);
    }

    /** The priced kinds among {@code kinds}, most expensive first. */
    public List<String> byPriceDescending(Collection<String> kinds) {
        return kinds.stream().filter(this::has)
                .sorted(Comparator.comparingDouble(this::perReplicaHour).reversed()).toList();
    }
}

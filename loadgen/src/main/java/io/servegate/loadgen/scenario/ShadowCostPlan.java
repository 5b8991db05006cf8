package io.servegate.loadgen.scenario;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The legs of the shadow-cost benchmark and what they add up to: each variant (a candidate and
 * the fraction of queries copied to it) is measured in pairs against legs with no rollout, on the
 * same gateway, alternating A B in odd rounds and B A in even ones, so that a drift of the machine
 * or of the JIT over the run favours neither side.
 */
public final class ShadowCostPlan {

    private ShadowCostPlan() {
    }

    /** How the candidate version behaves. */
    public enum Candidate {
        /** As the current version: the same batch times. */
        EQUAL,
        /** Batches take a few times longer: it cannot keep up with a copy of every query. */
        SLOW,
        /** Batches take a thousand times longer: it answers (almost) nothing. */
        STUCK;

        /** Its name in options and reports. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * A shadow rollout of a candidate, copying {@code fraction} of the queries.
     *
     * @param candidate how the candidate behaves
     * @param fraction  the rollout's {@code shadow_fraction}, in (0, 1]
     */
    public record Variant(Candidate candidate, double fraction) {

        public Variant {
            if (!(fraction > 0 && fraction <= 1)) {
                throw new IllegalArgumentException("a shadow fraction is in (0, 1], got " + fraction);
            }
        }

        /** {@code KIND[:FRACTION]}, e.g. {@code equal:0.1}; the fraction is 1 when not given. */
        public static Variant parse(String text) {
            String[] parts = text.trim().split(":", -1);
            if (parts.length > 2) {
                throw new IllegalArgumentException("a variant is KIND[:FRACTION], got '" + text + "'");
            }
            Candidate c;
            try {
                c = Candidate.valueOf(parts[0].trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("a variant's candidate is equal, slow or stuck, got '" + text + "'");
            }
            double f;
            try {
                f = parts.length == 2 ? Double.parseDouble(parts[1].trim()) : 1;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("a variant's fraction is a number, got '" + text + "'");
            }
            return new Variant(c, f);
        }

        /** {@code equal:1}, {@code stuck:0.1}. */
        public String label() {
            return candidate.label() + ":" + new java.math.BigDecimal(Double.toString(fraction)).stripTrailingZeros()
                    .toPlainString();
        }
    }

    /**
     * One measured leg.
     *
     * @param round   from 1
     * @param pair    the index of the variant this leg is paired for (in the order given)
     * @param variant the shadow rollout running during the leg; null for a leg without one
     */
    public record Leg(int round, int pair, Variant variant) {

        /** {@code off} or the variant's label. */
        public String label() {
            return variant == null ? "off" : variant.label();
        }
    }

    /**
     * The legs of {@code rounds} rounds: in each, every variant once beside a leg without a
     * rollout, the one without first in odd rounds and second in even ones.
     */
    public static List<Leg> legs(List<Variant> variants, int rounds) {
        if (variants.isEmpty() || rounds < 1) {
            throw new IllegalArgumentException("need at least one variant and one round");
        }
        List<Leg> legs = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            for (int i = 0; i < variants.size(); i++) {
                Leg off = new Leg(round, i, null);
                Leg on = new Leg(round, i, variants.get(i));
                legs.addAll(round % 2 == 1 ? List.of(off, on) : List.of(on, off));
            }
        }
        return legs;
    }

    /**
     * What one leg measured.
     *
     * @param leg     which leg
     * @param offered queries sent in the measured window
     * @param inSlo   predictions answered within the SLO
     */
    public record Outcome(Leg leg, long offered, long inSlo) {

        /** Goodput as a share of the offered queries. */
        public double goodput() {
            return offered > 0 ? (double) inSlo / offered : 0;
        }
    }

    /**
     * A variant against its paired legs without a rollout.
     *
     * @param variant     the variant
     * @param without     goodput of the paired legs without a rollout, their queries pooled
     * @param with        goodput of the variant's legs, pooled
     * @param ratio       {@code with / without}: 1 is no cost
     * @param pairRatios  the same ratio per round, for its spread
     */
    public record Comparison(Variant variant, double without, double with, double ratio, List<Double> pairRatios) {
    }

    /** For each variant, in the order of the legs, its goodput with the shadow over without. */
    public static List<Comparison> compare(List<Outcome> outcomes) {
        Map<Integer, Variant> variants = new LinkedHashMap<>();
        Map<Integer, Map<Integer, long[]>> byPair = new LinkedHashMap<>(); // pair → round → {offA, inA, offB, inB}
        for (Outcome o : outcomes) {
            if (o.leg().variant() != null) {
                variants.putIfAbsent(o.leg().pair(), o.leg().variant());
            }
            long[] s = byPair.computeIfAbsent(o.leg().pair(), k -> new LinkedHashMap<>())
                    .computeIfAbsent(o.leg().round(), k -> new long[4]);
            int at = o.leg().variant() == null ? 0 : 2;
            s[at] += o.offered();
            s[at + 1] += o.inSlo();
        }
        List<Comparison> out = new ArrayList<>();
        variants.forEach((pair, variant) -> {
            long[] total = new long[4];
            List<Double> ratios = new ArrayList<>();
            for (long[] s : byPair.get(pair).values()) {
                for (int i = 0; i < 4; i++) {
                    total[i] += s[i];
                }
                if (s[1] > 0 && s[2] > 0) {
                    ratios.add((double) s[3] * s[0] / ((double) s[2] * s[1]));
                }
            }
            double without = share(total[1], total[0]);
            double with = share(total[3], total[2]);
            out.add(new Comparison(variant, without, with, without > 0 ? with / without : Double.NaN, ratios));
        });
        return out;
    }

    private static double share(long part, long whole) {
        return whole > 0 ? (double) part / whole : 0;
    }
}

package io.servegate.gateway.fleet;

import io.servegate.gateway.registry.RegistrySnapshot;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@code GET /admin/get_fleet} answers: the members (and which of them are shutting down,
 * handing their versions off), the versions each schedules and their load (queries per second summed over the gateways that received them), and every version's
 * owner and fencing epoch, as this gateway's last heartbeat read them.
 */
public final class FleetReport {

    private FleetReport() {
    }

    /** The report of {@code ownership}; a fleet of one lists every registry version as its own. */
    public static Map<String, Object> of(Ownership ownership, RegistrySnapshot registry) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("self", ownership.self());
        FleetState state = ownership instanceof FleetMember m ? m.state() : null;
        if (state == null) {
            List<String> all = registry.models().stream().map(v -> Ownership.key(v.name(), v.version())).sorted()
                    .toList();
            out.put("store", ownership == Ownership.SOLO ? "memory" : "redis (not joined yet)");
            out.put("members", List.of(member(ownership.self(), "", all, Map.of(), true, false)));
            out.put("versions", all.stream().map(v -> version(v, ownership.self(), 0, "", 0)).toList());
            return out;
        }
        out.put("store", "redis");
        out.put("generation", state.generation());
        Map<String, Double> rates = state.totalRates();
        List<Map<String, Object>> members = new ArrayList<>();
        for (String m : state.members()) {
            members.add(member(m, state.addresses().getOrDefault(m, ""), state.ownedBy(m), rates,
                    m.equals(ownership.self()), state.draining().contains(m)));
        }
        out.put("members", members);
        List<Map<String, Object>> versions = new ArrayList<>();
        state.owners().forEach((v, a) -> versions.add(version(v, a.owner(), a.epoch(), a.pending(),
                rates.getOrDefault(v, 0.0))));
        out.put("versions", versions);
        return out;
    }

    private static Map<String, Object> member(String name, String address, List<String> versions,
            Map<String, Double> rates, boolean self, boolean draining) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("address", address);
        m.put("self", self);
        m.put("draining", draining);
        m.put("versions", versions);
        m.put("load", versions.stream().mapToDouble(v -> rates.getOrDefault(v, 0.0)).sum());
        return m;
    }

    private static Map<String, Object> version(String version, String owner, long epoch, String pending, double rate) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("version", version);
        v.put("owner", owner);
        v.put("epoch", epoch);
        v.put("handing_to", pending);
        v.put("rate", rate);
        return v;
    }
}

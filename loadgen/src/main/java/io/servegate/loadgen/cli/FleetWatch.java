package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.servegate.workload.admin.GatewayAdminClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Polls one gateway's {@code GET /admin/get_fleet} on a thread of its own and keeps every change of
 * the fleet it shows (members, and each version's owner, epoch and hand-off in flight) with the
 * time it was first seen, so that a run can say which versions moved and when. A poll that fails
 * (the gateway busy past the admin timeout) is skipped.
 */
final class FleetWatch implements AutoCloseable {

    private final GatewayAdminClient admin;
    private final long startNanos;
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "fleet-watch");
        t.setDaemon(true);
        return t;
    });
    private final List<Map<String, Object>> changes = new ArrayList<>();
    private Map<String, Object> last;

    /** @param startNanos times are given in seconds since this {@link System#nanoTime()} */
    FleetWatch(GatewayAdminClient admin, long startNanos, long periodMillis) {
        this.admin = admin;
        this.startNanos = startNanos;
        poller.scheduleWithFixedDelay(this::poll, 0, periodMillis, TimeUnit.MILLISECONDS);
    }

    private void poll() {
        try {
            Map<String, Object> view = compact(admin.get("get_fleet"));
            synchronized (changes) {
                if (!view.equals(last)) {
                    last = view;
                    Map<String, Object> change = new LinkedHashMap<>();
                    change.put("at_s", (System.nanoTime() - startNanos) / 1e9);
                    change.putAll(view);
                    changes.add(change);
                }
            }
        } catch (IOException e) {
            // skipped: the next poll sees the same state or a later one
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The members by name, and each version as {@code owner@epoch}, with {@code → member} while handed off. */
    static Map<String, Object> compact(JsonNode fleet) {
        List<String> members = new ArrayList<>();
        fleet.path("members").forEach(m -> members.add(m.path("name").asText()));
        Map<String, String> versions = new LinkedHashMap<>();
        fleet.path("versions").forEach(v -> {
            String pending = v.path("handing_to").asText("");
            versions.put(v.path("version").asText(), v.path("owner").asText() + "@" + v.path("epoch").asLong()
                    + (pending.isEmpty() ? "" : " → " + pending));
        });
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("members", members);
        out.put("versions", versions);
        return out;
    }

    /** The fleet as first seen, then each change, in order. */
    List<Map<String, Object>> changes() {
        synchronized (changes) {
            return List.copyOf(changes);
        }
    }

    @Override
    public void close() throws InterruptedException {
        poller.shutdownNow();
        poller.awaitTermination(5, TimeUnit.SECONDS);
    }
}

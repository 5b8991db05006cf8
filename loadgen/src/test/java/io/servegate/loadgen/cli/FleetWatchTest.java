package io.servegate.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FleetWatchTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aFleetIsSeenAsItsMembersAndEachVersionsOwnerEpochAndHandOff() throws Exception {
        Map<String, Object> before = FleetWatch.compact(JSON.readTree("""
                {"self":"gw1","store":"redis","generation":7,
                 "members":[{"name":"gw1","address":"127.0.0.1:1","versions":["fleet:1"],"load":700.0},
                            {"name":"gw2","address":"127.0.0.1:2","versions":[],"load":0.0}],
                 "versions":[{"version":"fleet:1","owner":"gw1","epoch":3,"handing_to":"","rate":700.0}]}
                """));
        assertThat(before).containsEntry("members", List.of("gw1", "gw2"))
                .containsEntry("versions", Map.of("fleet:1", "gw1@3"));
        Map<String, Object> handing = FleetWatch.compact(JSON.readTree("""
                {"members":[{"name":"gw1"},{"name":"gw2"},{"name":"gw3"}],
                 "versions":[{"version":"fleet:1","owner":"gw1","epoch":3,"handing_to":"gw3","rate":700.0}]}
                """));
        assertThat(handing).containsEntry("members", List.of("gw1", "gw2", "gw3"))
                .containsEntry("versions", Map.of("fleet:1", "gw1@3 → gw3"));
        // a change of the rate alone is no change of the fleet
        assertThat(FleetWatch.compact(JSON.readTree("""
                {"self":"gw1","members":[{"name":"gw1","load":1.0},{"name":"gw2","load":2.0}],
                 "versions":[{"version":"fleet:1","owner":"gw1","epoch":3,"handing_to":"","rate":1.0}]}
                """))).isEqualTo(before);
    }
}

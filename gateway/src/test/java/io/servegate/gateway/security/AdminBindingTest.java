package io.servegate.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servegate.gateway.GatewayApplication;
import io.servegate.gateway.api.BearerAuth;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;

/** The admin API binds beyond loopback only with a token; tokens can come from a file. */
class AdminBindingTest {

    @Test
    void aNonLoopbackAdminAddressWithoutATokenRefusesToStart() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(GatewayApplication.class)
                .properties("server.port=0", "servegate.admin.port=0", "servegate.admin.address=0.0.0.0")
                .run().close())
                .rootCause()
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("servegate.admin.address=0.0.0.0 is not a loopback address")
                .hasMessageContaining("servegate.admin.token");
    }

    @Test
    void loopbackAddressesNeedNoToken() {
        for (String loopback : new String[] {"127.0.0.1", "127.1.2.3", "::1", "localhost"}) {
            BearerAuth.requireLoopbackOrToken(loopback, "");
        }
        for (String open : new String[] {"0.0.0.0", "::", "10.1.2.3", "192.168.0.1", "no-such-host.invalid"}) {
            assertThatThrownBy(() -> BearerAuth.requireLoopbackOrToken(open, ""))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining(open);
            BearerAuth.requireLoopbackOrToken(open, "a-token");
        }
    }

    @Test
    void theTokenMayComeFromAFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, "  from-a-file\n");
        assertThat(BearerAuth.resolve("", file.toString(), "servegate.admin.token")).isEqualTo("from-a-file");
        assertThat(BearerAuth.resolve("inline", file.toString(), "servegate.admin.token")).isEqualTo("inline");
        assertThat(BearerAuth.resolve("", "", "servegate.admin.token")).isEmpty();
        Files.writeString(file, "\n");
        assertThatThrownBy(() -> BearerAuth.resolve("", file.toString(), "servegate.admin.token"))
                .hasMessageContaining("is empty");
        assertThatThrownBy(() -> BearerAuth.resolve("", dir.resolve("missing").toString(), "servegate.admin.token"))
                .hasMessageContaining("cannot read servegate.admin.token-file");
    }
}

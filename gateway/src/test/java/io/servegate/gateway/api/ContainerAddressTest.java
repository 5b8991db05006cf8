package io.servegate.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** add_container's {@code address} is host:port and nothing else; everything else is a 400. */
class ContainerAddressTest {

    @Test
    void acceptsHostPort() {
        for (String ok : new String[] {"127.0.0.1:7000", "localhost:1", "model-a.ns.svc.cluster.local:65535",
            "[::1]:8001", "[2001:db8::1]:80", "A1.example:443", "a".repeat(63) + ":1"}) {
            assertThat(ContainerAddress.validate(ok)).isEqualTo(ok);
        }
    }

    @Test
    void rejectsSchemesPathsUserInfoAndOddPortsOrHosts() {
        for (String bad : new String[] {"http://127.0.0.1:80", "grpc://h:1", "127.0.0.1:80/path", "user@h:80",
            "user:pw@h:80", "h:0", "h:65536", "h:99999999999", "h:+80", "h:-1", "h: 80", "h:\u0668\u0660", "h:",
            ":80", "h", "h:80?x=1", "h:80#f", "[::1:80", "[a/b]:80", "[::1]x:80", "[zz::1]:80", "-h:80", "h-:80",
            "h..x:80", ".h:80", "h_x:80", "h x:80", "\u00e9:80", "h\u0000:80", "a".repeat(64) + ":80",
            ("a".repeat(60) + ".").repeat(5) + "a:80", "%68:80", "h:80:80x"}) {
            assertThatThrownBy(() -> ContainerAddress.validate(bad)).as(bad)
                    .isInstanceOfSatisfying(ApiException.class,
                            e -> assertThat(e.status().value()).isEqualTo(400));
        }
    }
}

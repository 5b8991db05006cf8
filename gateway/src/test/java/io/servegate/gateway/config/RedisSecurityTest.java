package io.servegate.gateway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servegate.gateway.GatewayApplication;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.RedisRegistry;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistryUnavailableException;
import io.servegate.gateway.registry.SelectionConfig;
import io.servegate.gateway.selection.RedisSelectionStateStore;
import io.servegate.gateway.selection.StateBounds;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Redis credentials and TLS reach Lettuce, for the registry and the selection store, against a
 * real {@code redis-server} with {@code requirepass} and a TLS port (Debian's binary is built
 * with TLS). The certificates are a throwaway CA and server certificate made with openssl.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisSecurityTest {

    private static final String PASSWORD = "redis-pw-8d1f";

    @TempDir
    static Path dir;

    private Process redis;
    private int plainPort;
    private int tlsPort;
    private Path caFile;

    @BeforeAll
    void startRedisWithPasswordAndTls() throws Exception {
        caFile = dir.resolve("ca.crt");
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=servegate-test-ca",
                "-keyout", dir.resolve("ca.key").toString(), "-out", caFile.toString());
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                "-keyout", dir.resolve("server.key").toString(), "-out", dir.resolve("server.csr").toString());
        Files.writeString(dir.resolve("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
        openssl("x509", "-req", "-in", dir.resolve("server.csr").toString(), "-CA", caFile.toString(),
                "-CAkey", dir.resolve("ca.key").toString(), "-CAcreateserial", "-days", "2",
                "-extfile", dir.resolve("san.ext").toString(), "-out", dir.resolve("server.crt").toString());
        plainPort = freePort();
        tlsPort = freePort();
        Path log = dir.resolve("redis.log");
        redis = new ProcessBuilder("redis-server", "--port", Integer.toString(plainPort), "--bind", "127.0.0.1",
                "--tls-port", Integer.toString(tlsPort), "--tls-cert-file", dir.resolve("server.crt").toString(),
                "--tls-key-file", dir.resolve("server.key").toString(), "--tls-ca-cert-file", caFile.toString(),
                "--tls-auth-clients", "no", "--requirepass", PASSWORD, "--save", "", "--appendonly", "no",
                "--dir", dir.toString()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!Files.readString(log).contains("Ready to accept connections")) {
            assertThat(redis.isAlive()).as("redis-server runs: " + Files.readString(log)).isTrue();
            assertThat(System.nanoTime()).as("redis-server ready").isLessThan(until);
            Thread.sleep(20);
        }
    }

    @AfterAll
    void stopRedis() throws InterruptedException {
        if (redis != null) {
            redis.destroy();
            redis.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void thePasswordPropertyOrTheUriPasswordIsUsed() {
        String uri = "redis://127.0.0.1:" + plainPort;
        try (RedisRegistry registry = registry(uri, redisProps("", PASSWORD, false, true, ""))) {
            registry.addApp(new Application("pw-app", "floats", "-1", 1000, List.of(), SelectionConfig.SINGLE))
                    .block(Duration.ofSeconds(5));
            assertThat(registry.snapshot().app("pw-app")).isPresent();
        }
        try (RedisRegistry registry = registry("redis://" + PASSWORD + "@127.0.0.1:" + plainPort,
                redisProps("", "", false, true, ""))) {
            assertThat(registry.snapshot().app("pw-app")).isPresent();
        }
        try (RedisSelectionStateStore store = selection(uri, redisProps("default", PASSWORD, false, true, ""))) {
            assertThat(store.compareAndSet("pw-app", null, 0, new byte[] {1}).block(Duration.ofSeconds(5))).isTrue();
        }
    }

    @Test
    void aWrongOrMissingPasswordFailsClearly() {
        String uri = "redis://127.0.0.1:" + plainPort;
        assertThatThrownBy(() -> registry(uri, redisProps("", "wrong", false, true, "")))
                .isInstanceOf(RegistryUnavailableException.class).hasMessageContaining("WRONGPASS");
        assertThatThrownBy(() -> registry(uri, redisProps("", "", false, true, "")))
                .isInstanceOf(RegistryUnavailableException.class).hasMessageContaining("NOAUTH");
        assertThatThrownBy(() -> selection(uri, redisProps("", "wrong", false, true, "")))
                .hasStackTraceContaining("WRONGPASS");
    }

    @Test
    void tlsWithTheCaFileVerifiesTheServer() {
        String uri = "rediss://127.0.0.1:" + tlsPort;
        try (RedisRegistry registry = registry(uri, redisProps("", PASSWORD, false, true, caFile.toString()))) {
            assertThat(registry.snapshot()).isNotNull();
        }
        // tls=true turns a redis:// URI into a TLS connection
        try (RedisSelectionStateStore store = selection("redis://127.0.0.1:" + tlsPort,
                redisProps("", PASSWORD, true, true, caFile.toString()))) {
            assertThat(store.get("x", null).block(Duration.ofSeconds(5))).isNull();
        }
        // an unknown CA is refused while peers are verified, accepted when verification is off
        assertThatThrownBy(() -> registry(uri, redisProps("", PASSWORD, false, true, "")))
                .isInstanceOf(RegistryUnavailableException.class).hasMessageContaining("unable to find valid certification path");
        try (RedisRegistry registry = registry(uri, redisProps("", PASSWORD, false, false, ""))) {
            assertThat(registry.snapshot()).isNotNull();
        }
        // a plain connection to the TLS port does not get through
        assertThatThrownBy(() -> registry("redis://127.0.0.1:" + tlsPort, redisProps("", PASSWORD, false, true, "")))
                .isInstanceOf(RegistryUnavailableException.class);
    }

    /** The properties reach both stores through the gateway's own wiring, and a wrong password stops startup. */
    @Test
    void theGatewayStartsWithTheRightPasswordAndRefusesAWrongOne() {
        List<String> common = List.of("server.port=0", "servegate.admin.port=0",
                "servegate.registry.store=redis", "servegate.selection.store=redis", "servegate.fleet.secret=test",
                "servegate.registry.redis-uri=rediss://127.0.0.1:" + tlsPort,
                "servegate.redis.ca-file=" + caFile);
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(GatewayApplication.class)
                .properties(with(common, "servegate.redis.password=" + PASSWORD)).run()) {
            assertThat(ctx.getBean(Registry.class)).isInstanceOf(RedisRegistry.class);
            assertThat(ctx.getBean(io.servegate.gateway.selection.SelectionStateStore.class))
                    .isInstanceOf(RedisSelectionStateStore.class);
        }
        assertThatThrownBy(() -> new SpringApplicationBuilder(GatewayApplication.class)
                .properties(with(common, "servegate.redis.password=wrong")).run().close())
                .hasStackTraceContaining("WRONGPASS");
    }

    private static String[] with(List<String> common, String extra) {
        List<String> all = new ArrayList<>(common);
        all.add(extra);
        return all.toArray(String[]::new);
    }

    private static ServegateProperties.Redis redisProps(String user, String password, boolean tls, boolean verify,
            String ca) {
        return new ServegateProperties.Redis(user, password, tls, verify, ca, "", "");
    }

    private static RedisRegistry registry(String uri, ServegateProperties.Redis props) {
        return RedisRegistry.connect(RedisClients.create(uri, props), "sec", Duration.ofMillis(200));
    }

    private static RedisSelectionStateStore selection(String uri, ServegateProperties.Redis props) {
        return RedisSelectionStateStore.connect(RedisClients.create(uri, props), "sec", StateBounds.DEFAULT);
    }

    private void openssl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("openssl " + String.join(" ", args) + ": " + out).isZero();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}

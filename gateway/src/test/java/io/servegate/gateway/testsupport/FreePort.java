package io.servegate.gateway.testsupport;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A port free on every interface when asked, for servers a test configures before they start (the
 * OIP gRPC port, the fleet port). It is taken below Linux's ephemeral range (32768–60999 by
 * default): a port the kernel hands out for {@code bind(0)} can be handed again to any outgoing
 * connection (a Redis client, a test's flood) before the server binds it, and was.
 */
public final class FreePort {

    private static final int LOWEST = 20_000;
    private static final int HIGHEST = 32_000;
    /** Ports handed out by this JVM: two tests' servers never get the same one. */
    private static final Set<Integer> GIVEN = new HashSet<>();

    private FreePort() {
    }

    public static synchronized int pick() {
        for (int attempt = 0; attempt < 1_000; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(LOWEST, HIGHEST);
            if (GIVEN.contains(port)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket(port)) {
                GIVEN.add(port);
                return port;
            } catch (IOException inUse) {
                // taken: try another
            }
        }
        throw new IllegalStateException("no free port in " + LOWEST + ".." + HIGHEST + " after 1,000 tries");
    }
}

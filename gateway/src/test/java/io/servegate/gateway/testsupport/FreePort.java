package io.servegate.gateway.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

/** A loopback port free when asked, for servers a test configures before they start (the OIP gRPC port). */
public final class FreePort {

    private FreePort() {
    }

    public static int pick() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

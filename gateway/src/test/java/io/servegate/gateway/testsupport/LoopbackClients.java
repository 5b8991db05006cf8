package io.servegate.gateway.testsupport;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * Clients of a local gateway that come from a loopback address of their choosing (Linux routes
 * all of 127/8 to lo), so that a test can play many client addresses against per-address limits.
 */
public final class LoopbackClients {

    private LoopbackClients() {
    }

    /** A socket bound to {@code from} and connected to {@code port} on 127.0.0.1. */
    public static Socket connect(String from, int port) throws IOException {
        Socket s = new Socket();
        s.bind(new InetSocketAddress(InetAddress.getByName(from), 0));
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5_000);
        return s;
    }

    /** A GET from a socket bound to {@code from}: the answer's head and body, as text. */
    public static String getFrom(String from, int port, String path) throws IOException {
        try (Socket s = connect(from, port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        }
    }

    /** A plaintext gRPC channel to {@code port} on 127.0.0.1 whose connections come from {@code from}. */
    public static ManagedChannel grpcFrom(String from, int port) throws IOException {
        InetAddress local = InetAddress.getByName(from);
        return NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()
                .localSocketPicker(new NettyChannelBuilder.LocalSocketPicker() {
                    @Override
                    public SocketAddress createSocketAddress(SocketAddress remote, io.grpc.Attributes attrs) {
                        return new InetSocketAddress(local, 0);
                    }
                }).build();
    }
}

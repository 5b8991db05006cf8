package io.servegate.loadgen.harness;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code redis-server} of the load generator's own, on a free loopback port, with persistence
 * off (a benchmark's registry and states need not outlive it) and its output in a log file.
 */
public final class RedisChild implements AutoCloseable {

    private final Process process;
    private final int port;

    private RedisChild(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts {@code server} (e.g. {@code redis-server} on the PATH) and waits until it accepts connections. */
    public static RedisChild start(String server, Path log) throws IOException, InterruptedException {
        int port = GatewayProcess.freeLoopbackPort();
        Process p = new ProcessBuilder(List.of(server, "--port", Integer.toString(port), "--bind", GatewayProcess.HOST,
                "--save", "", "--appendonly", "no")).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        RedisChild redis = new RedisChild(p, port);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < until) {
            if (!p.isAlive()) {
                throw new IOException(server + " exited with status " + p.exitValue() + "; see " + log);
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(GatewayProcess.HOST, port), 200);
                return redis;
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        redis.close();
        throw new IOException(server + " did not accept connections on port " + port + " within 20 s; see " + log);
    }

    /** Its URI for the gateway's {@code servegate.registry.redis-uri}. */
    public String uri() {
        return "redis://" + GatewayProcess.HOST + ":" + port;
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}

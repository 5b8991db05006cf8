package io.servegate.gateway.demo;

import io.servegate.gateway.config.ServegateProperties;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Registry;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;

/**
 * The demo of the README's first command: registers an app backed by a real ONNX model
 * (Fashion-MNIST), starts the ONNX container as local child processes on free loopback ports,
 * registers them, writes a sample request and prints a curl command that works.
 */
public final class DemoRunner implements ApplicationListener<ApplicationReadyEvent>, SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(DemoRunner.class);
    private static final Path DATASET = Paths.get("/usr/share/datasets/fashion-mnist");

    private final ServegateProperties.Demo demo;
    private final Registry registry;
    private final List<Process> processes = new ArrayList<>();
    private volatile boolean running;

    public DemoRunner(ServegateProperties.Demo demo, Registry registry) {
        this.demo = demo;
        this.registry = registry;
    }

    @Override
    public void onApplicationEvent(ApplicationReadyEvent event) {
        try {
            int port = ((WebServerApplicationContext) event.getApplicationContext()).getWebServer().getPort();
            start(port);
        } catch (Exception e) {
            LOG.error("the demo could not start: {}", e.getMessage(), e);
        }
    }

    private void start(int queryPort) throws IOException, InterruptedException {
        Path jar = Paths.get(demo.containerJar());
        Path model = Paths.get(demo.modelPath());
        if (!Files.isRegularFile(jar) || !Files.isRegularFile(model)) {
            throw new IOException("demo needs " + jar.toAbsolutePath() + " and " + model.toAbsolutePath()
                    + "; run it from the repository root after `mvn package`");
        }
        registry.addModel(new ModelVersion(demo.model(), "1", List.of("demo", "fashion-mnist"), "floats",
                "onnx", model.toString(), -1)).block();
        registry.addApp(new Application(demo.app(), "floats", demo.defaultOutput(), demo.latencySloMicros(),
                List.of(demo.model()))).block();
        for (int i = 0; i < demo.replicas(); i++) {
            int port = launch(jar, model, i);
            registry.addReplica(new ContainerReplica(demo.model() + "-1-local-" + i, demo.model(), "1",
                    "127.0.0.1:" + port)).block();
        }
        Path request = writeSampleRequest();
        warmUp(queryPort, request);
        System.out.printf(Locale.ROOT, "%n  Servegate demo: app '%s' -> ONNX model '%s' (%d local replica%s)%n"
                + "  Try:%n    curl -s -X POST http://localhost:%d/%s/predict -H 'Content-Type: application/json' -d @%s%n"
                + "  Labels are Fashion-MNIST classes 0-9 (0 T-shirt/top ... 9 Ankle boot).%n%n",
                demo.app(), demo.model(), demo.replicas(), demo.replicas() == 1 ? "" : "s", queryPort, demo.app(),
                request);
    }

    private int launch(Path jar, Path model, int index) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(demo.jvmArgs());
        cmd.addAll(List.of("-jar", jar.toString(), "--name", demo.model(), "--version", "1", "--model",
                model.toString(), "--host", "127.0.0.1", "--port", "0"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        synchronized (processes) {
            processes.add(p);
        }
        CompletableFuture<Integer> port = new CompletableFuture<>();
        Thread reader = new Thread(() -> pipe(p.getInputStream(), port, index), "demo-container-" + index);
        reader.setDaemon(true);
        reader.start();
        try {
            return port.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            p.destroyForcibly();
            throw new IOException("container " + index + " did not report READY: " + e.getMessage(), e);
        }
    }

    private static void pipe(InputStream out, CompletableFuture<Integer> port, int index) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(out, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.startsWith("READY port=")) {
                    port.complete(Integer.parseInt(line.substring("READY port=".length()).trim()));
                } else {
                    LOG.info("[container {}] {}", index, line);
                }
            }
            port.completeExceptionally(new IOException("container exited"));
        } catch (IOException | NumberFormatException e) {
            port.completeExceptionally(e);
        }
    }

    /**
     * A few queries through our own front door before inviting the reader's: a cold JVM takes
     * hundreds of milliseconds over its first request, which would turn it into a default.
     */
    private void warmUp(int queryPort, Path request) {
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest warm = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort + "/" + demo.app()
                + "/predict")).header("Content-Type", "application/json").POST(ofFileOrEmpty(request)).build();
        for (int i = 0; i < 20; i++) {
            try {
                http.send(warm, HttpResponse.BodyHandlers.discarding());
            } catch (IOException e) {
                LOG.warn("demo warm-up query failed: {}", e.getMessage());
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static HttpRequest.BodyPublisher ofFileOrEmpty(Path file) {
        try {
            return HttpRequest.BodyPublishers.ofFile(file);
        } catch (IOException e) {
            return HttpRequest.BodyPublishers.noBody();
        }
    }

    /** One real held-out image when Debian's dataset-fashion-mnist is installed, else a drawn trouser shape. */
    private Path writeSampleRequest() throws IOException {
        float[] pixels = firstTestImage();
        StringBuilder json = new StringBuilder("{\"input\": [");
        for (int i = 0; i < pixels.length; i++) {
            json.append(i == 0 ? "" : ",").append(pixels[i] == 0f ? "0" : String.format(Locale.ROOT, "%.4f", pixels[i]));
        }
        json.append("]}\n");
        Path file = Paths.get("target", "demo-request.json").toAbsolutePath();
        Files.createDirectories(file.getParent());
        Files.writeString(file, json);
        return file;
    }

    private static float[] firstTestImage() throws IOException {
        for (String name : List.of("t10k-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte")) {
            Path p = DATASET.resolve(name);
            if (Files.isRegularFile(p)) {
                try (InputStream raw = Files.newInputStream(p);
                        DataInputStream in = new DataInputStream(name.endsWith(".gz") ? new GZIPInputStream(raw) : raw)) {
                    in.readInt(); // magic
                    in.readInt(); // count
                    int rows = in.readInt();
                    int cols = in.readInt();
                    float[] v = new float[rows * cols];
                    for (int i = 0; i < v.length; i++) {
                        v[i] = in.readUnsignedByte() / 255f;
                    }
                    return v;
                }
            }
        }
        float[] v = new float[784];
        for (int r = 3; r < 26; r++) {
            for (int c = 9; c < 19; c++) {
                v[r * 28 + c] = (c < 13 || c > 14 || r < 8) ? 0.8f : 0f;
            }
        }
        return v;
    }

    @Override
    public void start() {
        running = true;
    }

    /** Stops the child processes with SIGTERM, so they drain like any container. */
    @Override
    public void stop() {
        synchronized (processes) {
            processes.forEach(Process::destroy);
            for (Process p : processes) {
                try {
                    if (!p.waitFor(10, TimeUnit.SECONDS)) {
                        p.destroyForcibly();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            processes.clear();
        }
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}

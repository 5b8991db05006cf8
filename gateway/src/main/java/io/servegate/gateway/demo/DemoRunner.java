package io.servegate.gateway.demo;

import io.servegate.gateway.config.ServegateProperties;
import io.servegate.gateway.containers.ContainerManager;
import io.servegate.gateway.containers.Deployment;
import io.servegate.gateway.containers.DeploymentSpec;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Registry;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.zip.GZIPInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationListener;

/**
 * The demo of the README's first command: registers an app backed by a real ONNX model
 * (Fashion-MNIST), has the container manager deploy {@code servegate.demo.replicas} replicas of
 * the ONNX container (local child processes with the default {@code process} manager), waits
 * until they are ready, writes a sample request and prints a curl command that works.
 */
public final class DemoRunner implements ApplicationListener<ApplicationReadyEvent> {

    private static final Logger LOG = LoggerFactory.getLogger(DemoRunner.class);
    private static final Path DATASET = Paths.get("/usr/share/datasets/fashion-mnist");

    private final ServegateProperties.Demo demo;
    private final Registry registry;
    private final ContainerManager containers;
    private final Duration readinessTimeout;

    public DemoRunner(ServegateProperties.Demo demo, Registry registry, ContainerManager containers,
            Duration readinessTimeout) {
        this.demo = demo;
        this.registry = registry;
        this.containers = containers;
        this.readinessTimeout = readinessTimeout;
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
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(demo.jvmArgs());
        command.addAll(List.of("-jar", jar.toString(), "--model", model.toString()));
        containers.deploy(new DeploymentSpec(demo.model(), "1", null, command, List.of(), demo.replicas(), null,
                null)).block();
        awaitReady();
        Path request = writeSampleRequest();
        warmUp(queryPort, request);
        System.out.printf(Locale.ROOT, "%n  Servegate demo: app '%s' -> ONNX model '%s' (%d local replica%s)%n"
                + "  Try:%n    curl -s -X POST http://localhost:%d/%s/predict -H 'Content-Type: application/json' -d @%s%n"
                + "  Labels are Fashion-MNIST classes 0-9 (0 T-shirt/top ... 9 Ankle boot).%n%n",
                demo.app(), demo.model(), demo.replicas(), demo.replicas() == 1 ? "" : "s", queryPort, demo.app(),
                request);
    }

    /** Waits until the container manager has registered every replica (it does once each passes the OIP readiness check). */
    private void awaitReady() throws IOException, InterruptedException {
        long until = System.nanoTime() + readinessTimeout.toNanos();
        while (System.nanoTime() < until) {
            List<Deployment> deployments = containers.list().block();
            if (deployments != null && deployments.stream().anyMatch(d -> d.modelName().equals(demo.model())
                    && d.readyReplicas() >= demo.replicas())) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IOException("the demo's replicas were not ready within " + readinessTimeout + ": "
                + containers.list().block().stream().flatMap(d -> d.replicas().stream())
                        .map(r -> r.id() + " " + r.state() + (r.detail() == null ? "" : " (" + r.detail() + ")"))
                        .toList());
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
}

package io.servegate.gateway.testsupport;

import static org.junit.jupiter.api.Assumptions.abort;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.BuildImageResultCallback;
import com.github.dockerjava.api.exception.NotFoundException;
import io.servegate.gateway.containers.DockerContainerManager;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The real Docker engine the Docker tests run against ({@code DOCKER_HOST}, else the local
 * socket), and the onnx container image built FROM the locally made base. Tests skip (with a
 * message saying why) only when no engine answers or the base was never made: {@code bin/docker-setup}
 * provides both, and CI runs it.
 */
public final class DockerEngine {

    /** Made by bin/docker-setup (debootstrap + docker import): no registry can be reached here. */
    public static final String JAVA_BASE = "servegate/base-java:bookworm";
    public static final String ONNX_IMAGE = "servegate/onnx:test";

    private DockerEngine() {
    }

    /** @return a client for a live engine; aborts the test (skip) if none answers */
    public static DockerClient connectOrSkip() {
        String host = System.getenv().getOrDefault("DOCKER_HOST", "unix:///var/run/docker.sock");
        DockerClient docker = DockerContainerManager.connect(host);
        try {
            docker.pingCmd().exec();
        } catch (RuntimeException e) {
            banner("no Docker engine answers at " + host + " (" + e.getMessage() + "); run bin/docker-setup");
            abort("no Docker engine at " + host + ": run bin/docker-setup (CI does) to install and start one");
        }
        try {
            docker.inspectImageCmd(JAVA_BASE).exec();
        } catch (NotFoundException e) {
            banner("base image " + JAVA_BASE + " is missing; run bin/docker-setup");
            abort("base image " + JAVA_BASE + " is missing: run bin/docker-setup (CI does) to make it");
        }
        return docker;
    }

    /** Builds (or reuses Docker's cached layers of) the onnx container image from containers/onnx/Dockerfile. */
    public static String buildOnnxImage(DockerClient docker) {
        Path context = Path.of("../containers/onnx");
        if (!Files.isRegularFile(context.resolve("target/onnx-container.jar"))) {
            abort("containers/onnx/target/onnx-container.jar is missing: package containers/onnx first "
                    + "(mvn verify does)");
        }
        docker.buildImageCmd(context.toFile())
                .withDockerfile(new File(context.toFile(), "Dockerfile"))
                .withBuildArg("BASE_IMAGE", JAVA_BASE)
                .withTags(Set.of(ONNX_IMAGE))
                .exec(new BuildImageResultCallback())
                .awaitImageId(5, TimeUnit.MINUTES);
        return ONNX_IMAGE;
    }

    private static void banner(String message) {
        System.err.println("\n*** DOCKER TESTS SKIPPED: " + message + " ***\n");
    }
}

package io.servegate.gateway.containers.docker;

import static org.junit.jupiter.api.Assumptions.abort;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.BuildImageResultCallback;
import com.github.dockerjava.api.exception.NotFoundException;
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

    /** @return the engine's address: {@code DOCKER_HOST}, else the local socket */
    public static String host() {
        return System.getenv().getOrDefault("DOCKER_HOST", "unix:///var/run/docker.sock");
    }

    /** @return a client for a live engine with the local base; aborts the test (skip) otherwise */
    public static DockerClient connectOrSkip() {
        String problem = problem();
        if (problem != null) {
            abort(problem);
        }
        return DockerContainerManager.connect(host());
    }

    /** For {@code @EnabledIf}: whether an engine answers and has the local base (prints loudly if not). */
    public static boolean available() {
        return problem() == null;
    }

    private static String problem() {
        try (DockerClient docker = DockerContainerManager.connect(host())) {
            try {
                docker.pingCmd().exec();
            } catch (RuntimeException e) {
                return banner("no Docker engine answers at " + host() + " (" + e.getMessage()
                        + "): run bin/docker-setup (CI does) to install and start one");
            }
            try {
                docker.inspectImageCmd(JAVA_BASE).exec();
            } catch (NotFoundException e) {
                return banner("base image " + JAVA_BASE + " is missing: run bin/docker-setup (CI does) to make it");
            }
            return null;
        } catch (java.io.IOException e) {
            return banner("closing a Docker client: " + e.getMessage());
        }
    }

    /** Builds (or reuses Docker's cached layers of) the onnx container image from containers/onnx/Dockerfile. */
    public static String buildOnnxImage(DockerClient docker) {
        Path context = Path.of("../../containers/onnx");
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

    private static String banner(String message) {
        System.err.println("\n*** DOCKER TESTS SKIPPED: " + message + " ***\n");
        return message;
    }
}

package io.servegate.gateway.containers;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The gateway's own class path has no platform managers: selecting one names the module it needs. */
class ContainerManagerProvidersTest {

    private final ClassLoader loader = getClass().getClassLoader();

    @Test
    void aDocumentedManagerThatIsNotOnTheClassPathNamesItsModule() {
        assertThatThrownBy(() -> ContainerManagerProviders.load("docker", loader))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'docker'")
                .hasMessageContaining("container-manager-docker module is not on this gateway's class path")
                .hasMessageContaining(
                        "container-managers/docker/target/container-manager-docker-<version>-gateway.jar");
        assertThatThrownBy(() -> ContainerManagerProviders.load("kubernetes", loader))
                .hasMessageContaining("container-manager-kubernetes module");
    }

    @Test
    void anUnknownManagerListsTheKindsThereAre() {
        assertThatThrownBy(() -> ContainerManagerProviders.load("nomad", loader))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("servegate.containers.manager must be 'process', 'external', 'docker' or 'kubernetes', "
                        + "got 'nomad'");
    }
}

package io.servegate.gateway.containers;

import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

/** Finds the {@link ContainerManagerProvider} that {@code servegate.containers.manager} selects. */
public final class ContainerManagerProviders {

    /** The modules of the managers the gateway documents, by kind, for the error that names the missing one. */
    private static final Map<String, String> MODULES = Map.of("docker", "container-manager-docker",
            "kubernetes", "container-manager-kubernetes");

    private ContainerManagerProviders() {
    }

    /**
     * The provider of {@code kind} on the class path of {@code loader}.
     *
     * @throws IllegalStateException naming the module to add, or the kinds there are
     */
    public static ContainerManagerProvider load(String kind, ClassLoader loader) {
        List<ContainerManagerProvider> providers = ServiceLoader.load(ContainerManagerProvider.class, loader)
                .stream().map(ServiceLoader.Provider::get).toList();
        return providers.stream().filter(p -> p.kind().equals(kind)).findFirst()
                .orElseThrow(() -> new IllegalStateException(missing(kind, providers)));
    }

    private static String missing(String kind, List<ContainerManagerProvider> present) {
        String module = MODULES.get(kind);
        if (module != null) {
            return "servegate.containers.manager is '" + kind + "', but the " + module + " module is not on this "
                    + "gateway's class path: run the gateway jar that module builds (container-managers/" + kind
                    + "/target/" + module + "-<version>-gateway.jar) or an image made from it; see "
                    + "docs/container-managers.md";
        }
        return "servegate.containers.manager must be 'process', 'external', 'docker' or 'kubernetes', got '" + kind
                + "'" + (present.isEmpty() ? "" : "; providers on the class path: "
                        + present.stream().map(ContainerManagerProvider::kind).toList());
    }
}

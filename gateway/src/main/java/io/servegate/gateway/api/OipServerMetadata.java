package io.servegate.gateway.api;

import java.util.List;

/**
 * What the Open Inference Protocol's server metadata says about the gateway, over REST
 * ({@code GET /v2}) and gRPC ({@code ServerMetadata}) alike.
 *
 * @param name       the server's name
 * @param version    the gateway's version ({@code dev} when not run from a packaged jar)
 * @param extensions the protocol extensions served: binary tensor data on REST
 */
record OipServerMetadata(String name, String version, List<String> extensions) {

    static final OipServerMetadata GATEWAY = new OipServerMetadata("servegate", packageVersion(),
            List.of("binary_tensor_data"));

    private static String packageVersion() {
        String version = OipServerMetadata.class.getPackage().getImplementationVersion();
        return version == null ? "dev" : version;
    }
}

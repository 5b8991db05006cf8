package io.servegate.oip.client;

/** Names of the parameters of the Open Inference Protocol's model repository extension. */
public final class RepositoryParameters {

    /** ServerMetadata's extension name for the repository RPCs, as Triton and KServe name it. */
    public static final String EXTENSION = "model_repository";

    /** RepositoryModelLoad/Unload parameter naming one version; without it, load the highest, unload all. */
    public static final String VERSION = "version";

    private RepositoryParameters() {
    }
}

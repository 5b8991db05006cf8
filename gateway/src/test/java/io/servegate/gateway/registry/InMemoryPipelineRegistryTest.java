package io.servegate.gateway.registry;

/** Pipelines in the {@link InMemoryRegistry}. */
class InMemoryPipelineRegistryTest extends PipelineRegistryContractTest {

    @Override
    protected Registry newRegistry() {
        return new InMemoryRegistry();
    }
}

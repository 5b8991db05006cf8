package io.servegate.gateway.registry;

/** Profiles and plans in the {@link InMemoryRegistry}. */
class InMemoryProfileRegistryTest extends ProfileRegistryContractTest {

    @Override
    protected Registry newRegistry() {
        return new InMemoryRegistry();
    }
}

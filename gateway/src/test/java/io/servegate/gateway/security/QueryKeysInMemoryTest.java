package io.servegate.gateway.security;

import io.servegate.gateway.testsupport.FreePort;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link QueryKeysContract} with the in-memory registry. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "servegate.admin.port=0")
class QueryKeysInMemoryTest extends QueryKeysContract {

    private static final int GRPC_PORT = FreePort.pick();

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry properties) {
        properties.add("servegate.oip.grpc-port", () -> GRPC_PORT);
    }

    @Override
    int grpcPort() {
        return GRPC_PORT;
    }

    @Override
    void assertStoreHoldsNo(String key) {
        // the in-memory store holds QueryKey records, which have no field for the key
    }
}

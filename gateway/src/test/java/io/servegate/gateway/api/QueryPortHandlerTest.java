package io.servegate.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.server.reactive.HttpHandler;

/** The query port's handler is the one that sends queries straight to their routes. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0", "servegate.oip.grpc-port=0"})
class QueryPortHandlerTest {

    @Autowired
    HttpHandler portHandler;

    @Test
    void theQueryPortsHandlerSendsQueriesToTheirRoutesFirst() {
        assertThat(portHandler).isInstanceOf(QueryRoutesFirst.class);
    }
}

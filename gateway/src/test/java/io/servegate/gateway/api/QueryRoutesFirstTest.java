package io.servegate.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.http.server.reactive.MockServerHttpResponse;
import reactor.core.publisher.Mono;

/** Queries go to the query routes' handler, everything else to Spring's chain. */
class QueryRoutesFirstTest {

    @Test
    void postsToThePredictUpdateAndInferPathsAreQueries() {
        assertThat(QueryRoutesFirst.isQuery("/app/predict")).isTrue();
        assertThat(QueryRoutesFirst.isQuery("/app/update")).isTrue();
        assertThat(QueryRoutesFirst.isQuery("/v2/models/m/infer")).isTrue();
        assertThat(QueryRoutesFirst.isQuery("/v2/models/m/versions/2/infer")).isTrue();

        assertThat(QueryRoutesFirst.isQuery("//predict")).isFalse();
        assertThat(QueryRoutesFirst.isQuery("/predict")).isFalse();
        assertThat(QueryRoutesFirst.isQuery("/a/b/predict")).isFalse();
        assertThat(QueryRoutesFirst.isQuery("/app/predictions")).isFalse();
        assertThat(QueryRoutesFirst.isQuery("/actuator/predict")).isFalse();
        assertThat(QueryRoutesFirst.isQuery("/v2/models/m")).isFalse();
        assertThat(QueryRoutesFirst.isQuery("/v2/models/m/ready")).isFalse();
        assertThat(QueryRoutesFirst.isQuery("/metrics")).isFalse();
    }

    @Test
    void onlyPostQueriesTakeTheShortWay() {
        List<String> seen = new ArrayList<>();
        HttpHandler queries = (request, response) -> Mono.fromRunnable(() -> seen.add("queries " + request.getPath()));
        HttpHandler rest = (request, response) -> Mono.fromRunnable(() -> seen.add("rest " + request.getPath()));
        QueryRoutesFirst handler = new QueryRoutesFirst(queries, rest);

        handle(handler, HttpMethod.POST, "/app/predict");
        handle(handler, HttpMethod.GET, "/app/predict");
        handle(handler, HttpMethod.POST, "/v2/models/m/infer");
        handle(handler, HttpMethod.GET, "/v2/health/ready");
        handle(handler, HttpMethod.POST, "/actuator/predict");

        assertThat(seen).containsExactly("queries /app/predict", "rest /app/predict", "queries /v2/models/m/infer",
                "rest /v2/health/ready", "rest /actuator/predict");
    }

    private static void handle(HttpHandler handler, HttpMethod method, String path) {
        handler.handle(MockServerHttpRequest.method(method, path).build(), new MockServerHttpResponse()).block();
    }
}

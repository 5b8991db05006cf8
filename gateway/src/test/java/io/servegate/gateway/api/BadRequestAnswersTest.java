package io.servegate.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * How the HTTP APIs answer what they cannot serve: integers of any length and numbers beyond the
 * double range get 400 (a 309-digit integer was a 500), no error body reflects a request header,
 * a known path with the wrong method gets 405 with {@code Allow}, malformed JSON is described by
 * what is wrong and where (not by the parser's internals), and OIP REST has its server metadata.
 * A real gateway over loopback HTTP; no model containers are needed, since all of it is decided
 * before a query reaches one.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0", "servegate.oip.grpc-port=0"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadRequestAnswersTest {

    /** 2 * 10^308, 309 digits: beyond the largest double (about 1.8 * 10^308). */
    private static final String DIGITS_309 = "2" + "0".repeat(308);
    private static final List<String> BEYOND_DOUBLE = List.of(DIGITS_309, "-" + DIGITS_309, "9".repeat(309),
            "9".repeat(999), DIGITS_309 + ".5", DIGITS_309 + "e0", "1e400", "-1e400", "1E+400", "1e99999999999");
    /** Odd but in range: 10^308 is a double, and what is too small for one rounds to zero. */
    private static final List<String> IN_RANGE = List.of("1" + "0".repeat(308), "1e-400", "-1e-400",
            "0.5e-99999999999", "0." + "3".repeat(900), "-0", "1.0e+308");

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    void register() throws Exception {
        assertThat(send(adminServer.port(), "POST", "/admin/add_model", "{\"model_name\":\"nums\",\"model_version\":"
                + "\"1\",\"input_type\":\"floats\"}").statusCode()).isEqualTo(200);
        for (String type : List.of("floats", "doubles", "ints")) {
            assertThat(send(adminServer.port(), "POST", "/admin/add_app", "{\"name\":\"nums-" + type + "\","
                    + "\"input_type\":\"" + type + "\",\"default_output\":\"-1\",\"latency_slo_micros\":100000,"
                    + "\"candidate_model_names\":[],\"selection_policy\":\"exp3\"}").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void priorityAndWeightAreValidatedStoredAndShown() throws Exception {
        String app = "{\"name\":\"tiered\",\"input_type\":\"floats\",\"default_output\":\"-1\","
                + "\"latency_slo_micros\":100000";
        for (String[] wrong : new String[][] {{"\"priority\":\"gold\"", "critical, standard, sheddable"},
                {"\"priority\":3", "priority"}, {"\"weight\":0", "weight"}, {"\"weight\":1001", "weight"},
                {"\"weight\":1.5", "weight"}, {"\"weight\":\"2\"", "weight"}}) {
            HttpResponse<String> r = send(adminServer.port(), "POST", "/admin/add_app", app + "," + wrong[0] + "}");
            assertThat(r.statusCode()).as(wrong[0]).isEqualTo(400);
            assertThat(reason(r.body(), "/admin/add_app")).as(wrong[0]).contains(wrong[1]);
        }
        assertThat(send(adminServer.port(), "POST", "/admin/add_app",
                app + ",\"priority\":\"Critical\",\"weight\":3}").statusCode()).isEqualTo(200);
        JsonNode shown = json.readTree(send(adminServer.port(), "POST", "/admin/get_application",
                "{\"name\":\"tiered\"}").body());
        assertThat(shown.path("priority").asString()).isEqualTo("critical");
        assertThat(shown.path("weight").asInt()).isEqualTo(3);
        JsonNode plain = json.readTree(send(adminServer.port(), "POST", "/admin/get_application",
                "{\"name\":\"nums-floats\"}").body());
        assertThat(plain.path("priority").asString()).isEqualTo("standard");
        assertThat(plain.path("weight").asInt()).isEqualTo(1);
    }

    @Test
    void integersOfAnyLengthAndNumbersBeyondTheDoubleRangeAre400() throws Exception {
        List<String> wrong = new ArrayList<>();
        for (String n : BEYOND_DOUBLE) {
            for (String type : List.of("floats", "doubles", "ints")) {
                String app = "/nums-" + type;
                expect400(wrong, queryPort, app + "/predict", "{\"input\":[1," + n + "]}", n);
                expect400(wrong, queryPort, app + "/predict", "{\"input_batch\":[[1,2],[3," + n + "]]}", n);
                expect400(wrong, queryPort, app + "/update", "{\"input\":[" + n + ",2],\"label\":1}", n);
            }
            expect400(wrong, queryPort, "/v2/models/nums/infer", "{\"inputs\":[{\"name\":\"input\",\"datatype\":"
                    + "\"FP32\",\"shape\":[1,2],\"data\":[1," + n + "]}]}", n);
            expect400(wrong, adminServer.port(), "/admin/add_app", "{\"name\":\"nums-t\",\"input_type\":\"floats\","
                    + "\"default_output\":\"x\",\"latency_slo_micros\":1000,\"confidence_threshold\":" + n + "}", n);
        }
        assertThat(wrong).as("answers other than 400 with {error, cause}").isEmpty();
        for (String n : IN_RANGE) {
            for (String path : List.of("/nums-doubles/predict", "/nums-doubles/update")) {
                HttpResponse<String> r = send(queryPort, "POST", path, "{\"input\":[1," + n + "],\"label\":1}");
                assertThat(r.statusCode()).as(path + " " + brief(n) + ": " + r.body()).isEqualTo(200);
            }
        }
    }

    @Test
    void errorBodiesReflectNoHeader() throws Exception {
        String host = "reflected-host-7f3a.example";
        for (int port : List.of(queryPort, adminServer.port())) {
            for (String path : List.of("/no/such/path", "/admin/nope", "/v2/nope", "/")) {
                String answer = raw(port, "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nX-Forwarded-Host: "
                        + host + "\r\nUser-Agent: " + host + "\r\nConnection: close\r\n\r\n");
                assertThat(answer).as(path).startsWith("HTTP/1.1 404").doesNotContain(host);
                String error = json.readTree(body(answer)).path("error").asString();
                // under /v2 on the query port the protocol's body: the reason itself in 'error'
                // the admin port serves no /v2 path: its errors keep {error, cause} there too
                assertThat(error).as(path).isEqualTo(port == queryPort && path.startsWith("/v2")
                        ? "no endpoint GET " + path : "not found");
            }
        }
    }

    /**
     * A malformed {@code Content-Type} (6 KB of it, or with control characters, or a charset no
     * one knows) or {@code Accept} gets an answer that quotes none of it, on every port: a 4xx
     * with {@code {error, cause}} (under {@code /v2} the protocol's {@code {error}}), or 200 where
     * the body could be read all the same.
     */
    @Test
    void errorBodiesQuoteNoMediaTypeHeader() throws Exception {
        String marker = "zq7echo";
        List<String> contentTypes = List.of(
                "application/json;" + marker.repeat(6 * 1024 / marker.length()),
                "application/" + marker + "\u0001\u0007/json",
                "application/json; charset=" + marker.repeat(600),
                "application/json; charset=x-" + marker,
                marker + "/" + marker + "; q=\"" + marker);
        record Call(int port, String path) {
        }
        List<Call> calls = List.of(new Call(queryPort, "/nums-floats/predict"), new Call(queryPort, "/nums-floats/update"),
                new Call(queryPort, "/v2/models/nums/infer"), new Call(adminServer.port(), "/admin/add_app"),
                new Call(adminServer.port(), "/admin/get_all_applications"));
        List<String> wrong = new ArrayList<>();
        for (Call c : calls) {
            for (String type : contentTypes) {
                String body = "{\"input\":[1,2],\"label\":1}";
                String answer = raw(c.port(), "POST " + c.path() + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                        + type + "\r\nContent-Length: " + body.length() + "\r\nConnection: close\r\n\r\n" + body);
                check(wrong, c + " " + brief(type), answer, marker, c.path());
            }
        }
        for (String accept : List.of(marker.repeat(800), "text/" + marker + "\u0001", "*/*; q=" + marker)) {
            String answer = raw(queryPort, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAccept: " + accept
                    + "\r\nConnection: close\r\n\r\n");
            check(wrong, "/metrics Accept " + brief(accept), answer, marker, "/metrics");
        }
        assertThat(wrong).as("answers quoting the header back, or not a 4xx error body").isEmpty();
    }

    private void check(List<String> wrong, String what, String answer, String marker, String path) {
        int status = Integer.parseInt(answer.substring(9, 12));
        String body = body(answer);
        boolean ok;
        if (body.contains(marker)) {
            ok = false;
        } else if (status == 200) {
            ok = true; // where the type does not decide how the body is read, a readable body is answered
        } else {
            // Netty refuses some raw headers before any handler runs, with an empty body
            ok = status >= 400 && status < 500 && body.length() < 400
                    && (body.isEmpty() || reason(body, path) != null);
        }
        if (!ok) {
            wrong.add(what + " → " + answer.substring(0, 12) + " " + brief(body));
        }
    }

    @Test
    void aKnownPathWithTheWrongMethodIs405WithAllow() throws Exception {
        record Wrong(int port, String method, String path, String allow) {
        }
        for (Wrong w : List.of(new Wrong(queryPort, "GET", "/nums-floats/predict", "POST"),
                new Wrong(queryPort, "PUT", "/nums-floats/update", "POST"),
                new Wrong(queryPort, "POST", "/v2/health/live", "GET"),
                new Wrong(queryPort, "DELETE", "/v2/models/nums", "GET"),
                new Wrong(queryPort, "GET", "/v2/models/nums/infer", "POST"),
                new Wrong(adminServer.port(), "GET", "/admin/add_app", "POST"),
                new Wrong(adminServer.port(), "POST", "/admin/ping", "GET"))) {
            HttpResponse<String> r = send(w.port(), w.method(), w.path(), w.method().equals("GET") ? "" : "{}");
            assertThat(r.statusCode()).as(w + ": " + r.body()).isEqualTo(405);
            assertThat(r.headers().allValues("Allow")).as(w.toString()).containsExactly(w.allow());
            if (!w.path().startsWith("/v2")) {
                assertThat(json.readTree(r.body()).path("error").asString()).isEqualTo("method not allowed");
            }
            assertThat(reason(r.body(), w.path())).contains(w.method() + " " + w.path(), w.allow());
        }
        assertThat(send(queryPort, "GET", "/nums-floats/nope", "").statusCode()).isEqualTo(404);
    }

    @Test
    void malformedJsonIsDescribedWithoutTheParsersInternals() throws Exception {
        record Bad(String body, String says) {
        }
        for (Bad b : List.of(new Bad("{\"input\":[1,2", "line 1, column 14"),
                new Bad("{\"input\":\n  [1,2,}", "line 2, column 8"),
                new Bad("{\"input\": [01]}", "leading zero"),
                new Bad("{\"input\": [1" + "1".repeat(1500) + "]}", "longer than"),
                new Bad("{\"input\": [1]} [2]", "after the JSON value"),
                new Bad("{\"input\": \"" + "x\u0001" + "\"}", "control character"),
                new Bad("{input: [1]}", "line 1, column 2"),
                new Bad("[".repeat(1200) + "]".repeat(1200), "nested deeper than"))) {
            for (String path : List.of("/nums-floats/predict", "/nums-floats/update", "/v2/models/nums/infer")) {
                HttpResponse<String> r = send(queryPort, "POST", path, b.body());
                assertThat(r.statusCode()).as(path + " " + b).isEqualTo(400);
                String cause = reason(r.body(), path);
                assertThat(cause).as(path + " " + b).startsWith("malformed JSON").contains(b.says())
                        .doesNotContain("StreamRead", "Source", "REDACTED", "`", "tools.jackson", "Exception");
            }
        }
    }

    @Test
    void oipServerMetadata() throws Exception {
        HttpResponse<String> r = send(queryPort, "GET", "/v2", "");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode metadata = json.readTree(r.body());
        assertThat(metadata.path("name").asString()).isEqualTo("servegate");
        assertThat(metadata.path("version").asString()).isNotEmpty();
        assertThat(metadata.path("extensions").isArray()).isTrue();
    }

    private void expect400(List<String> wrong, int port, String path, String body, String number) throws Exception {
        HttpResponse<String> r = send(port, "POST", path, body);
        String reason = r.statusCode() == 400 ? reason(r.body(), path) : null;
        if (reason == null || reason.isEmpty()) {
            wrong.add(path + " with " + brief(number) + ": " + r.statusCode() + " " + brief(r.body()));
        }
    }

    /**
     * The reason an error body gives: {@code cause} of {@code {"error", "cause"}}, or under
     * {@code /v2} the protocol's {@code {"error"}} (which must then have no {@code cause}); null
     * when the body has neither shape.
     */
    private String reason(String body, String path) {
        JsonNode answer = json.readTree(body);
        boolean oip = path.startsWith("/v2");
        if (!answer.path("error").isString() || answer.has("cause") == oip || !oip && !answer.path("cause").isString()) {
            return null;
        }
        return answer.path(oip ? "error" : "cause").asString();
    }

    private HttpResponse<String> send(int port, String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json");
        b.method(method, body.isEmpty() ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    /** Sends raw bytes (headers no HTTP client would let a caller set) and reads until the server closes. */
    private static String raw(int port, String request) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(request.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            in.transferTo(got);
            return got.toString(StandardCharsets.UTF_8);
        }
    }

    private static String body(String answer) {
        return answer.substring(answer.indexOf("\r\n\r\n") + 4);
    }

    private static String brief(String s) {
        return s.length() > 60 ? s.substring(0, 60) + "...(" + s.length() + " chars)" : s;
    }
}

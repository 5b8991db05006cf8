package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.HttpLoad;
import io.servegate.gateway.testsupport.HttpLoad.Outcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Containers that misbehave, each in its own process, under closed-loop load from 4 clients:
 * one that hangs (SIGSTOP, then SIGCONT), one that sends undecodable output tensors, one that
 * sends one output too few, and one that gets 10× slower for a while. Every query must be
 * answered (prediction or default) within the SLO, no prediction may be wrong, the circuit must
 * open, half-open and close again where the container fails, and AIMD must back off where it is
 * slow. The breaker opens after 5 calls and stays open 1 s, and a batch RPC times out after
 * 500 ms, so that a fault shows within seconds.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "servegate.admin.port=0", "servegate.cache.enabled=false", "servegate.rpc.min-batch-timeout=500ms",
        "servegate.rpc.sliding-window-size=10", "servegate.rpc.minimum-number-of-calls=5",
        "servegate.rpc.wait-in-open-state=1s", "servegate.rpc.permitted-calls-in-half-open-state=2"})
class ContainerFaultsTest {

    static final long SLO_MICROS = 300_000;
    static final int CLIENTS = 4;
    /** The slow container's app: 10× its service time misses it. */
    static final long SLOW_SLO_MICROS = 250_000;
    /** The poisoned-rows apps: room for a split batch's extra calls on a shared, loaded machine. */
    static final long POISON_SLO_MICROS = 1_000_000;

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    MeterRegistry meters;

    final HttpLoad http = new HttpLoad();

    @Test
    void aHungContainerGetsDefaultsWithinTheSloAndItsCircuitRecoversAfterSigcont() throws Exception {
        try (ContainerProcess c = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "hang",
                "--version", "1")) {
            register("hang", c);
            long[] marks = new long[2];
            List<Outcome> out = underLoad("hang", Duration.ofSeconds(11), () -> {
                Thread.sleep(2000);
                marks[0] = http.now();
                c.suspend();
                Thread.sleep(4000);
                marks[1] = http.now();
                c.resume();
            });
            report("hang (SIGSTOP 4 s)", out, marks[1] - marks[0]);
            assertAnsweredInTime(out, SLO_MICROS);
            assertThat(HttpLoad.count(HttpLoad.sentBetween(out, marks[0] + 500_000_000L, marks[1]), Outcome::isDefault))
                    .as("defaults while hung").isPositive();
            assertCircuitCycled("hang-1");
            assertThat(failures("hang-1", "DEADLINE_EXCEEDED")).as("calls that outlived their deadline by far")
                    .isPositive();
            assertRecovered(out, marks[1], 2);
        }
    }

    @Test
    void undecodableOutputsBecomeDefaultsAndOpenTheCircuit() throws Exception {
        corruptingContainer("garbage");
    }

    @Test
    void aWrongNumberOfOutputsBecomesDefaultsAndOpensTheCircuit() throws Exception {
        corruptingContainer("wrong-count");
    }

    private void corruptingContainer(String fault) throws Exception {
        String model = fault.replace("-", "");
        Path trigger = Files.createTempDirectory("servegate-fault").resolve("on");
        trigger.getParent().toFile().deleteOnExit();
        try (ContainerProcess c = ContainerProcess.start(ContainerProcess.EMULATED, "--name", model, "--version", "1",
                "--fault", fault, "--fault-file", trigger.toString())) {
            register(model, c);
            long[] marks = new long[2];
            List<Outcome> out = underLoad(model, Duration.ofSeconds(9), () -> {
                Thread.sleep(2000);
                marks[0] = http.now();
                Files.createFile(trigger);
                Thread.sleep(3000);
                marks[1] = http.now();
                Files.delete(trigger);
            });
            long faultEnd = marks[1];
            report(fault + " (3 s)", out, marks[1] - marks[0]);
            assertAnsweredInTime(out, SLO_MICROS);
            assertThat(HttpLoad.count(out, o -> o.isDefault() && o.explanation().contains("failed")))
                    .as("container errors answered with defaults").isPositive();
            assertCircuitCycled(model + "-1");
            assertThat(failures(model + "-1", null)).as("failed batches counted").isPositive();
            assertRecovered(out, faultEnd, 2);
        }
    }

    @Test
    void aContainerTenTimesSlowerForAWhileMakesAimdBackOffAndRecover() throws Exception {
        tenTimesSlower("slow", "clipper");
    }

    @Test
    void symphonyAnswersInTimeThroughATenTimesSlowerSpellAndRecovers() throws Exception {
        tenTimesSlower("slowsym", "symphony");
    }

    private void tenTimesSlower(String model, String scheduler) throws Exception {
        // 30 + 0.5·b ms is well inside a 250 ms SLO; 10× that (300 ms and more) is over it but
        // inside the 500 ms batch RPC timeout, so batches complete late rather than fail
        Path trigger = Files.createTempDirectory("servegate-slow").resolve("on");
        trigger.getParent().toFile().deleteOnExit();
        try (ContainerProcess c = ContainerProcess.start(ContainerProcess.EMULATED, "--name", model,
                "--version", "1", "--beta-ms", "30", "--alpha-ms", "0.5", "--slow-factor", "10",
                "--slow-file", trigger.toString())) {
            register(model, c, SLOW_SLO_MICROS, scheduler);
            List<double[]> sizes = new ArrayList<>(); // {time, AIMD max batch size}
            long[] marks = new long[2];
            List<Outcome> out = underLoad(model, Duration.ofSeconds(11), () -> {
                long start = System.nanoTime();
                while (System.nanoTime() - start < 10_500_000_000L) {
                    long t = System.nanoTime() - start;
                    if (marks[0] == 0 && t > 3_000_000_000L) {
                        marks[0] = http.now();
                        Files.createFile(trigger);
                    } else if (marks[1] == 0 && t > 6_000_000_000L) {
                        marks[1] = http.now();
                        Files.delete(trigger);
                    }
                    Gauge g = meters.find("servegate.batch.max.size").tag("replica", model + "-1").gauge();
                    if (g != null) {
                        sizes.add(new double[] {http.now(), g.value()});
                    }
                    Thread.sleep(50);
                }
            });
            long slowFrom = marks[0];
            long slowTo = marks[1];
            report("10x slow (3 s), " + scheduler, out, slowTo - slowFrom);
            assertAnsweredInTime(out, SLOW_SLO_MICROS);
            double before = sizes.stream().filter(s -> s[0] < slowFrom).mapToDouble(s -> s[1]).max().orElseThrow();
            double during = sizes.stream().filter(s -> s[0] >= slowFrom && s[0] < slowTo + 500_000_000L)
                    .mapToDouble(s -> s[1]).min().orElseThrow();
            double after = sizes.get(sizes.size() - 1)[1];
            System.out.printf("FAULTS slow (%s): max batch before %.0f, lowest while slow %.0f, at the end %.0f%n",
                    scheduler, before, during, after);
            if (scheduler.equals("clipper")) {
                assertThat(during).as("AIMD backs off while the container is slow").isLessThan(before);
                assertThat(after).as("AIMD grows again afterwards").isGreaterThan(during);
            }
            assertRecovered(out, slowTo, 2);
            assertThat(transitions(model + "-1", "CLOSED", "OPEN")).as("a slow replica's circuit stays closed").isZero();
        }
    }

    @Test
    void rowsTheContainerReportsAsFailedGet400AndTheRestOfTheirBatchIsPredicted() throws Exception {
        poisonedRows("rowerrors", true);
    }

    @Test
    void batchesAContainerFailsWholeAreSplitUntilOnlyThePoisonedQueriesFail() throws Exception {
        double splits = poisonedRows("wholebatch", false);
        assertThat(splits).as("failed batches split by the gateway").isPositive();
    }

    /**
     * 8 clients, one query in five holding the value 7 that the container raises on (the gateway
     * cannot know which): the good queries are predicted, the poisoned ones get 400 with the
     * container's message, the circuit stays closed. Returns the gateway's batch splits.
     */
    private double poisonedRows(String model, boolean rowErrors) throws Exception {
        try (ContainerProcess c = ContainerProcess.start(ContainerProcess.EMULATED, "--name", model,
                "--version", "1", "--fault", "raise-on-value=7", "--row-errors", Boolean.toString(rowErrors))) {
            register(model, c, POISON_SLO_MICROS);
            List<Outcome> out = underLoad(model, 8, Duration.ofSeconds(8), ContainerFaultsTest::poisonable, () -> { });
            List<Outcome> poisoned = out.stream().filter(o -> poisoned(o.request())).toList();
            List<Outcome> good = out.stream().filter(o -> !poisoned(o.request())).toList();
            long predicted = correct(good);
            long rejected = HttpLoad.count(poisoned, o -> o.status() == 400
                    && o.body().path("cause").asString().contains("the model rejects inputs holding 7"));
            double rows = meters.find("servegate.rows.rejected").tag("replica", model + "-1").counter().count();
            double splits = meters.find("servegate.batch.splits").tag("replica", model + "-1").counter().count();
            Map<Integer, Long> statuses = out.stream().collect(java.util.stream.Collectors.groupingBy(Outcome::status,
                    java.util.TreeMap::new, java.util.stream.Collectors.counting()));
            System.out.printf("FAULTS poisoned rows (%s): %d queries, %d good of which %d predicted correctly "
                    + "(%.2f %%), %d poisoned of which %d got 400; statuses %s; rows rejected %.0f, batch splits %.0f, "
                    + "mean batch %.2f; %s%n", rowErrors ? "per-row errors" : "whole batch fails", out.size(),
                    good.size(), predicted, 100.0 * predicted / good.size(), poisoned.size(), rejected, statuses,
                    rows, splits, meters.find("servegate.batch.size").tag("replica", model + "-1").summary().mean(),
                    HttpLoad.latencies(out));
            assertThat(poisoned.size()).as("poisoned queries sent").isGreaterThan(out.size() / 6);
            // isolation, whatever the machine's load: another client's row never changes a good
            // query's answer, and a poisoned query is never predicted; at worst a query whose
            // batch took too long gets the default at its deadline
            assertThat(good).as("good queries: predicted, or the default at their deadline")
                    .allMatch(o -> o.predicted() || o.isDefault() && o.explanation().contains("SLO"));
            assertThat(correct(good)).as("predictions with their own label").isEqualTo(HttpLoad.count(good,
                    Outcome::predicted));
            assertThat(poisoned).as("poisoned queries: 400 with the container's message, or the deadline default")
                    .allMatch(o -> o.status() == 400
                            && o.body().path("cause").asString().contains("the model rejects inputs holding 7")
                            || o.isDefault() && o.explanation().contains("SLO"));
            assertThat(rows).as("rejected rows counted").isGreaterThanOrEqualTo(rejected);
            Outcome oip = http.post("http://127.0.0.1:" + queryPort + "/v2/models/" + model + "/infer",
                    Map.of("inputs", List.of(Map.of("name", "input", "datatype", "FP32", "shape", List.of(1, 3),
                            "data", List.of(7, 1, 2)))));
            assertThat(oip.status()).as("OIP REST: a rejected input " + oip.body()).isEqualTo(400);
            // the protocol's error body: the reason in 'error'
            assertThat(oip.body().path("error").asString()).contains("the model rejects inputs holding 7");
            assertThat(transitions(model + "-1", "CLOSED", "OPEN")).as("the circuit stays closed").isZero();
            // in time: judged only where the gateway's own timers are not starved by the machine
            double[] ms = good.stream().mapToDouble(Outcome::latencyMillis).sorted().toArray();
            org.junit.jupiter.api.Assumptions.assumeTrue(ms[ms.length / 2] < POISON_SLO_MICROS / 4_000.0,
                    "median latency " + ms[ms.length / 2] + " ms: the machine is too loaded to judge deadlines");
            assertThat((double) predicted).as("good queries predicted in time").isGreaterThanOrEqualTo(0.99 * good.size());
            assertThat((double) rejected).as("poisoned queries answered 400").isGreaterThanOrEqualTo(0.95 * poisoned.size());
            return splits;
        }
    }

    /** Three values in 100..999, or for one query in five, one of them 7. */
    static float[] poisonable(int client, int i) {
        float[] v = {100 + (client * 31 + i * 17) % 900, 100 + (client * 13 + i * 29) % 900, 100 + (i * 7 + client) % 900};
        if (i % 5 == client % 5) {
            v[i % 3] = 7;
        }
        return v;
    }

    private static boolean poisoned(Object request) {
        for (float f : (float[]) ((Map<?, ?>) request).get("input")) {
            if (f == 7) {
                return true;
            }
        }
        return false;
    }

    private void register(String model, ContainerProcess c) throws Exception {
        register(model, c, SLO_MICROS);
    }

    private void register(String model, ContainerProcess c, long sloMicros) throws Exception {
        register(model, c, sloMicros, "symphony");
    }

    private void register(String model, ContainerProcess c, long sloMicros, String scheduler) throws Exception {
        admin("add_app", Map.of("name", model + "app", "input_type", "floats", "default_output", "none",
                "latency_slo_micros", sloMicros));
        admin("add_model", Map.of("model_name", model, "model_version", "1", "input_type", "floats",
                "scheduler", scheduler));
        admin("add_model_links", Map.of("app_name", model + "app", "model_names", List.of(model)));
        admin("add_container", Map.of("model_name", model, "model_version", "1", "address", c.address(),
                "container_id", model + "-1"));
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < until) {
            Outcome o = http.post(adminUrl() + "/admin/get_all_containers", Map.of());
            for (var n : o.body()) {
                if ((model + "-1").equals(n.path("container_id").asString()) && n.path("available").booleanValue()) {
                    return;
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("replica " + model + "-1 did not become available");
    }

    private void admin(String endpoint, Map<String, ?> body) {
        Outcome o = http.post(adminUrl() + "/admin/" + endpoint, body);
        assertThat(o.status()).as(() -> endpoint + " " + (o.body() != null ? o.body() : o.error())
                + "; connections the gateway dropped: " + dropped(null)).isEqualTo(200);
    }

    private String adminUrl() {
        return "http://127.0.0.1:" + adminServer.port();
    }

    interface Timeline {
        void run() throws Exception;
    }

    /** Closed-loop load on {@code model}'s app while {@code timeline} runs on this thread. */
    private List<Outcome> underLoad(String model, Duration length, Timeline timeline) throws Exception {
        return underLoad(model, CLIENTS, length, ContainerFaultsTest::input, timeline);
    }

    private List<Outcome> underLoad(String model, int clients, Duration length,
            java.util.function.BiFunction<Integer, Integer, float[]> input, Timeline timeline) throws Exception {
        String url = "http://127.0.0.1:" + queryPort + "/" + model + "app/predict";
        CompletableFuture<List<Outcome>> load = CompletableFuture.supplyAsync(() -> {
            try {
                return http.closedLoop(url, clients, length, (client, i) -> Map.of("input", input.apply(client, i)));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        timeline.run();
        return load.get();
    }

    static float[] input(int client, int i) {
        return new float[] {client, i % 1000, (client * 7 + i) % 13};
    }

    /** The emulated container's label: the first largest element's index, modulo its 10 classes. */
    static String label(float[] v) {
        int best = 0;
        for (int k = 1; k < v.length; k++) {
            if (v[k] > v[best]) {
                best = k;
            }
        }
        return Integer.toString(best % 10);
    }

    /**
     * Every query got a 200, in time (see {@link HttpLoad#answeredInTime}). A failed connection's
     * message names how it ended; the connections the gateway itself closed on the query port, by
     * reason, tell whether it was one of them.
     */
    private void assertAnsweredInTime(List<Outcome> out, long sloMicros) {
        assertThat(out).isNotEmpty();
        assertThat(out.stream().filter(o -> o.status() != 200).toList())
                .as(() -> "queries not answered with 200, of " + out.size()
                        + "; query-port connections the gateway dropped: " + droppedOnQueryPort()).isEmpty();
        assertThat(out).as("explanations are one line, no stack trace")
                .allMatch(o -> o.explanation() == null || !o.explanation().contains("\n"));
        assertThat(HttpLoad.answeredInTime(out, sloMicros)).as("at most 2 % later than SLO + 1 s; "
                + HttpLoad.latencies(out)).isTrue();
    }

    /** {@code servegate.connections.dropped} of the query port, by reason, where not zero. */
    private Map<String, Double> droppedOnQueryPort() {
        return dropped("query");
    }

    /** {@code servegate.connections.dropped} of {@code port} (every port: null), by port and reason, where not zero. */
    private Map<String, Double> dropped(String port) {
        var search = meters.find("servegate.connections.dropped");
        return (port == null ? search : search.tag("port", port)).counters().stream()
                .filter(c -> c.count() > 0).collect(java.util.stream.Collectors.toMap(
                        c -> (port == null ? c.getId().getTag("port") + "/" : "") + c.getId().getTag("reason"),
                        Counter::count, Double::sum, java.util.TreeMap::new));
    }

    /** Queries sent from 2 s after the fault ended are mostly (more than 1 in {@code of}) predictions again. */
    private static void assertRecovered(List<Outcome> out, long faultEnd, int of) {
        List<Outcome> late = out.stream().filter(o -> o.sentNanos() > faultEnd + 2_000_000_000L).toList();
        assertThat(late).isNotEmpty();
        assertThat(HttpLoad.count(late, Outcome::predicted)).as("predictions after recovery")
                .isGreaterThan(late.size() / of);
    }

    private void assertCircuitCycled(String replica) {
        assertThat(transitions(replica, "CLOSED", "OPEN")).as("circuit opened").isPositive();
        assertThat(transitions(replica, "OPEN", "HALF_OPEN")).as("circuit half-opened").isPositive();
        // closed by a half-open trial, or at once by a batch that answered while it was open
        assertThat(transitions(replica, "HALF_OPEN", "CLOSED") + transitions(replica, "OPEN", "CLOSED"))
                .as("circuit closed again").isPositive();
    }

    private double transitions(String replica, String from, String to) {
        Counter c = meters.find("servegate.circuit.transitions").tag("replica", replica).tag("from", from)
                .tag("to", to).counter();
        return c == null ? 0 : c.count();
    }

    /** Batches the replica failed with {@code code}, or with any code when null. */
    private double failures(String replica, String code) {
        return meters.find("servegate.batch.failures").tag("replica", replica).counters().stream()
                .filter(c -> code == null || code.equals(c.getId().getTag("code")))
                .mapToDouble(Counter::count).sum();
    }

    /** One line per fault for the README's table. */
    private void report(String fault, List<Outcome> out, long faultNanos) {
        long predicted = HttpLoad.count(out, Outcome::predicted);
        long defaults = HttpLoad.count(out, Outcome::isDefault);
        long errors = out.size() - predicted - defaults;
        double[] ms = out.stream().mapToDouble(Outcome::latencyMillis).sorted().toArray();
        long wrong = out.stream().filter(Outcome::predicted).count() - correct(out);
        Map<String, Long> reasons = out.stream().filter(Outcome::isDefault).collect(java.util.stream.Collectors
                .groupingBy(o -> o.explanation().replaceAll(":.*", ""), java.util.TreeMap::new,
                        java.util.stream.Collectors.counting()));
        System.out.printf("FAULTS %s: %d queries, %d predicted, %d defaults, %d errors, %d wrong, latency p50 %.0f ms"
                + " p99 %.0f ms max %.0f ms, fault lasted %.1f s; defaults by reason %s; sent again after the JDK"
                + " client's own race %d%n", fault, out.size(), predicted, defaults, errors, wrong, ms[ms.length / 2],
                ms[(int) (ms.length * 0.99)], ms[ms.length - 1], faultNanos / 1e9, reasons, http.clientRaces());
        assertThat(wrong).as("predictions with a wrong label (misaligned outputs)").isZero();
    }

    /** Predictions whose label matches their input: a short batch must never shift outputs. */
    private long correct(List<Outcome> out) {
        return out.stream().filter(Outcome::predicted).filter(o -> o.body().path("output").asString()
                .equals(label((float[]) ((Map<?, ?>) o.request()).get("input")))).count();
    }
}

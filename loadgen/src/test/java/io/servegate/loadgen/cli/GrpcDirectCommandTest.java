package io.servegate.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.containers.noop.NoopContainer;
import io.servegate.loadgen.load.LatencySummary;
import io.servegate.loadgen.load.LoadResult;
import io.servegate.loadgen.report.BenchmarkReport;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Runs the subcommand end to end against a real noop container over loopback gRPC. */
class GrpcDirectCommandTest {

    @TempDir
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return new CommandLine(new LoadGen()).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .execute(args);
    }

    @Test
    void startNoopMeasuresEveryBatchSizeAndWritesJson() throws Exception {
        int code = run("grpc-direct", "--start-noop", "--batch-sizes", "1,4", "--clients", "2",
                "--duration-s", "0.5", "--warmup-s", "0.2", "--jvm-warmup-s", "0.2", "--input-length", "16",
                "--out", dir.toString());

        assertThat(code).as("stderr: %s", err).isZero();
        BenchmarkReport report = BenchmarkReport.readJson(report());
        assertThat(report.benchmark()).isEqualTo("grpc-direct");
        assertThat(report.settings()).containsEntry("startNoop", true).containsEntry("clients", 2);
        assertThat(report.results()).extracting(LoadResult::batchSize).containsExactly(1, 4);
        for (LoadResult r : report.results()) {
            assertThat(r.requests()).isPositive();
            assertThat(r.errors()).isZero();
            assertThat(r.inputsPerSec()).isCloseTo(r.requestsPerSec() * r.batchSize(),
                    org.assertj.core.api.Assertions.within(1e-6));
            LatencySummary l = r.latency();
            assertThat(l.count()).isEqualTo(r.requests());
            assertThat(l.p50Ms()).isPositive().isLessThanOrEqualTo(l.p99Ms());
            assertThat(l.p99Ms()).isLessThanOrEqualTo(l.p999Ms());
            assertThat(l.p999Ms()).isLessThanOrEqualTo(l.maxMs() * 1.001);
        }
        assertThat(out.toString()).contains("inputs/s").contains("grpc-direct.json");
    }

    @Test
    void failingRequestsAreCountedAndFailTheRun() throws Exception {
        try (ModelContainer<float[], String> noop = NoopContainer.builder(TensorType.FLOATS).name("noop")
                .host("127.0.0.1").port(0).build().start()) {
            int code = run("grpc-direct", "--target", "127.0.0.1:" + noop.port(), "--model", "no-such-model",
                    "--batch-sizes", "2", "--clients", "1", "--duration-s", "1", "--warmup-s", "1",
                    "--jvm-warmup-s", "0", "--out", dir.toString());

            assertThat(code).isEqualTo(1);
            LoadResult r = BenchmarkReport.readJson(report()).results().get(0);
            assertThat(r.requests()).isZero();
            assertThat(r.errors()).isPositive();
            assertThat(r.latency()).isNull();
            assertThat(r.firstError()).contains("NOT_FOUND").contains("no-such-model");
        }
    }

    @Test
    void needsExactlyOneTarget() {
        assertThat(run("grpc-direct", "--out", dir.toString())).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(run("grpc-direct", "--start-noop", "--target", "127.0.0.1:1", "--out", dir.toString()))
                .isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(err.toString()).contains("exactly one of --target and --start-noop");
    }

    /** The report of the one run, in its folder {@code <out>/grpc-direct-<UTC timestamp>/}. */
    private Path report() throws IOException {
        try (Stream<Path> runs = Files.list(dir)) {
            return runs.filter(p -> p.getFileName().toString().startsWith("grpc-direct-")).findFirst().orElseThrow()
                    .resolve("grpc-direct.json");
        }
    }
}

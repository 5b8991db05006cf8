package io.servegate.core.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.scheduling.PolicyKind;
import java.io.IOException;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RunRecorderTest {

    @Test
    void linesFromManyThreadsStayWhole() throws Exception {
        StringWriter out = new StringWriter();
        RunRecorder rec = new RunRecorder(out);
        rec.model("m", PolicyKind.SYMPHONY, 20_000_000);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            int id = t;
            Thread thread = new Thread(() -> {
                for (int i = 0; i < 5_000; i++) {
                    rec.arrival("m", i, i + 20_000_000L);
                    rec.batch("m", "r" + id, i, 3, 7_000_000, 7_500_000);
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread t : threads) {
            t.join();
        }
        rec.close();
        String[] lines = out.toString().split("\n");
        assertThat(lines[0]).isEqualTo("# " + RunRecorder.FORMAT);
        assertThat(lines).hasSize(2 + 8 * 5_000 * 2);
        for (int i = 2; i < lines.length; i++) {
            assertThat(lines[i]).matches("arrival,m,\\d+,\\d+|batch,m,r\\d,\\d+,3,7000000,7500000");
        }
    }

    @Test
    void namesWithSeparatorsRoundTrip() {
        for (String name : List.of("plain", "a,b", "100%", "%2C", "line\nbreak\r", "")) {
            assertThat(RunRecorder.decode(RunRecorder.encode(name))).isEqualTo(name);
            assertThat(RunRecorder.encode(name)).doesNotContain(",", "\n", "\r");
        }
    }

    @Test
    void anIoErrorStopsTheRecordingAndIsThrownOnClose() {
        RunRecorder rec = new RunRecorder(new java.io.Writer() {
            @Override
            public void write(char[] c, int off, int len) throws IOException {
                throw new IOException("disk full");
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        });
        for (int i = 0; i < 100_000; i++) {
            rec.arrival("m", i, i); // overflows the buffer: the error is kept, not thrown
        }
        assertThat(rec.error()).hasMessage("disk full");
        org.assertj.core.api.Assertions.assertThatThrownBy(rec::close).hasMessage("disk full");
    }
}

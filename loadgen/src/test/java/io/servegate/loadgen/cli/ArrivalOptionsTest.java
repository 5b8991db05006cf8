package io.servegate.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ArrivalOptionsTest {

    @TempDir
    Path dir;

    @Test
    void optionsPickTheProcess() throws IOException {
        ArrivalOptions o = new ArrivalOptions();
        assertThat(o.process().describe()).isEqualTo("poisson");
        o.kind = ArrivalOptions.Kind.gamma;
        o.cv2 = 4;
        assertThat(o.process().describe()).isEqualTo("gamma(CV²=4.0)");
        o.kind = ArrivalOptions.Kind.trace;
        assertThatThrownBy(o::process).hasMessageContaining("needs --trace");
        Path file = dir.resolve("t.txt");
        Files.writeString(file, "5\n");
        o.trace = file;
        assertThat(o.process().describe()).startsWith("trace(");
    }
}

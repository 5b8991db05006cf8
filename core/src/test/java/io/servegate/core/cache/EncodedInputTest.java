package io.servegate.core.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class EncodedInputTest {

    @Test
    void equalBytesAreEqualKeysAndEveryByteCounts() {
        Random random = new Random(7);
        for (int length : new int[] {0, 1, 7, 8, 9, 3136, 3139}) {
            byte[] bytes = new byte[length];
            random.nextBytes(bytes);
            EncodedInput input = new EncodedInput(bytes.clone());
            assertThat(input).isEqualTo(new EncodedInput(bytes.clone())).hasSameHashCodeAs(new EncodedInput(bytes.clone()));
            for (int i = 0; i < length; i++) {
                byte[] other = bytes.clone();
                other[i] ^= (byte) (1 << random.nextInt(8));
                EncodedInput changed = new EncodedInput(other);
                assertThat(changed).as("byte %d of %d", i, length).isNotEqualTo(input);
                assertThat(changed.hashCode()).as("byte %d of %d", i, length).isNotEqualTo(input.hashCode());
            }
        }
        assertThat(new EncodedInput(new byte[8])).isNotEqualTo(new EncodedInput(new byte[9]));
    }

    @Test
    void imagesThatDifferInOnePixelSpreadOverTheLowBits() {
        // what the prediction cache holds: 784-float inputs, many alike but for a pixel
        byte[] base = new byte[784 * Float.BYTES];
        Set<Integer> buckets = new HashSet<>();
        for (int i = 0; i < 4096; i++) {
            byte[] image = base.clone();
            ByteBuffer.wrap(image).putFloat((i % 784) * Float.BYTES, (i / 784 + 1) / 255f);
            buckets.add(new EncodedInput(image).hashCode() & 1023);
        }
        // 4,096 keys into 1,024 buckets leave about 1,024 * e^-4 ≈ 19 empty when the hash is uniform
        assertThat(buckets.size()).isGreaterThan(980);
    }
}

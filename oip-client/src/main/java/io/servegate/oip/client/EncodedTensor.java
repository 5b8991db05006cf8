package io.servegate.oip.client;

import com.google.protobuf.ByteString;
import java.util.List;

/**
 * A batch encoded as one Open Inference Protocol tensor: its datatype, its shape and its
 * contents in the protocol's raw form (little-endian, row-major; BYTES elements each preceded
 * by a 4-byte little-endian length).
 */
public record EncodedTensor(String datatype, List<Long> shape, ByteString raw) {

    public EncodedTensor {
        shape = List.copyOf(shape);
    }
}

package io.servegate.gateway.cache;

import com.google.protobuf.ByteString;

/** One prediction: a model version applied to one input, identified by its encoded bytes. */
public record CacheKey(String model, String version, ByteString input) {

    /** Approximate heap footprint, for the byte-bounded cache. */
    int weight(String output) {
        return 64 + 2 * (model.length() + version.length() + output.length()) + input.size();
    }
}

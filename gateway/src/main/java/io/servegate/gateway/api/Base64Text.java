package io.servegate.gateway.api;

import java.nio.ByteBuffer;
import java.util.Base64;

/**
 * A JSON string of base64 decoded where it lies in the body's bytes: no {@code String} of the
 * text, no tree node. Parsing a 200 KB string into a tree took Jackson about 1 to 2 ms per
 * request here, and decoding the resulting string copied it once more.
 */
final class Base64Text {

    private Base64Text() {
    }

    /**
     * The bytes that the string starting with the quote at {@code json[open]} encodes, or null
     * when it is not plain base64 (an escape, a control character, no closing quote, a character
     * or padding that base64 does not allow): the tree parser then reads it and says what is wrong.
     */
    static OneFieldBody.Scanned<byte[]> scan(byte[] json, int open) {
        int i = open + 1;
        while (i < json.length && json[i] != '"') {
            byte b = json[i];
            if (b == '\\' || (b >= 0 && b < 0x20)) {
                return null;
            }
            i++;
        }
        if (i >= json.length) {
            return null;
        }
        ByteBuffer decoded;
        try {
            decoded = Base64.getDecoder().decode(ByteBuffer.wrap(json, open + 1, i - open - 1));
        } catch (IllegalArgumentException e) {
            return null;
        }
        byte[] out = decoded.array();
        if (decoded.arrayOffset() != 0 || decoded.remaining() != out.length) {
            out = new byte[decoded.remaining()];
            decoded.get(out);
        }
        return new OneFieldBody.Scanned<>(out, i + 1);
    }
}

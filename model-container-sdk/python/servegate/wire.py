"""ModelInfer messages in and out without copying the raw tensor contents.

Python's protobuf copies a ``bytes`` field when it parses a message and again each time the field
is read, which for a batch of images is most of the request. The request's raw contents are
therefore cut out of the received bytes as ``memoryview`` slices (no copy); only the rest of the
message, a few hundred bytes, goes through protobuf. Responses put their raw contents after the
rest of the message, which the protobuf encoding allows for any field.
"""

RAW_INPUT_CONTENTS_FIELD = 7  # ModelInferRequest.raw_input_contents
RAW_OUTPUT_CONTENTS_FIELD = 6  # ModelInferResponse.raw_output_contents

_VARINT, _FIXED64, _LENGTH_DELIMITED, _FIXED32 = 0, 1, 2, 5


class WireFormatError(ValueError):
    """Bytes that are not a protobuf message."""


def _read_varint(view, pos, end):
    result = shift = 0
    while True:
        if pos >= end:
            raise WireFormatError("message ends inside a varint")
        b = view[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 64:
            raise WireFormatError("varint longer than 10 bytes")


def encode_varint(value):
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def split_bytes_field(data, field_number):
    """(the message's bytes without ``field_number``, the values of that length-delimited field as
    memoryviews into ``data``). Only the top level is scanned: nested messages are skipped whole."""
    view = memoryview(data)
    end = len(view)
    kept, values = [], []
    pos = kept_from = 0
    while pos < end:
        field_start = pos
        tag, pos = _read_varint(view, pos, end)
        wire_type = tag & 7
        if wire_type == _VARINT:
            _, pos = _read_varint(view, pos, end)
        elif wire_type == _FIXED64:
            pos += 8
        elif wire_type == _FIXED32:
            pos += 4
        elif wire_type == _LENGTH_DELIMITED:
            length, pos = _read_varint(view, pos, end)
            if length > end - pos:
                raise WireFormatError("field %d declares %d bytes but %d remain" % (tag >> 3, length, end - pos))
            if tag >> 3 == field_number:
                values.append(view[pos:pos + length])
                kept.append(view[kept_from:field_start])
                kept_from = pos + length
            pos += length
        else:
            raise WireFormatError("unsupported wire type %d in field %d" % (wire_type, tag >> 3))
        if pos > end:
            raise WireFormatError("message ends inside field %d" % (tag >> 3))
    if not values:
        return data, values
    kept.append(view[kept_from:end])
    return b"".join(kept), values


def append_bytes_field(serialized, field_number, values):
    """``serialized`` followed by ``values`` as occurrences of a repeated bytes field."""
    tag = encode_varint(field_number << 3 | _LENGTH_DELIMITED)
    parts = [serialized]
    for value in values:
        parts += (tag, encode_varint(len(value)), value)
    return b"".join(parts)

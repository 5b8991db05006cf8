"""Clipper's five input types and their Open Inference Protocol encoding, as in the Java SDK.

A batch of N numeric vectors of equal length d travels as one tensor of shape [N, d]
(INT32, FP32 or FP64, little-endian, row-major); strings and byte strings travel as a BYTES
tensor of shape [N] whose raw form prefixes each element with its 4-byte little-endian length.
Decoding accepts the raw form and the typed ``contents`` form.
"""

import numbers
import struct

import numpy as np


class TensorFormatError(ValueError):
    """A tensor whose datatype, shape or contents do not fit the model's type."""


def _batch_size(shape):
    if len(shape) == 0 or len(shape) > 2:
        raise TensorFormatError("shape %s must be [N] or [N, d]" % _fmt(shape))
    n = shape[0]
    if n == 0:
        raise TensorFormatError("empty batch: shape %s has no rows" % _fmt(shape))
    if n < 0 or n > 2**31 - 1:
        raise TensorFormatError("invalid batch dimension %d in shape %s" % (n, _fmt(shape)))
    return n


def _fmt(shape):
    return "[" + ", ".join(str(d) for d in shape) + "]"


class TensorType:
    """One of ``ints, floats, doubles, bytes, strings`` and the OIP datatype that carries it."""

    numeric = False

    def __init__(self, clipper_name, datatype):
        self.clipper_name = clipper_name
        self.datatype = datatype

    def __repr__(self):
        return self.clipper_name

    def _require_datatype(self, actual):
        if actual != self.datatype:
            raise TensorFormatError("datatype %s does not match the model's input type '%s', which is carried as %s"
                                    % (actual, self.clipper_name, self.datatype))


class NumericType(TensorType):
    """Fixed-width numeric vectors: a batch is one numpy array of shape [N, d]."""

    numeric = True

    def __init__(self, clipper_name, datatype, dtype, contents_field):
        super().__init__(clipper_name, datatype)
        self.dtype = np.dtype(dtype).newbyteorder("<")
        self.contents_field = contents_field

    def decode(self, datatype, shape, raw=None, contents=None):
        """A writable [N, d] array from raw bytes or from the typed contents message."""
        self._require_datatype(datatype)
        shape = list(shape)
        n = _batch_size(shape)
        d = shape[1] if len(shape) == 2 else 1
        if d <= 0 or d > 2**31 - 1:
            raise TensorFormatError("invalid vector dimension %d in shape %s" % (d, _fmt(shape)))
        if raw is not None:
            expected = n * d * self.dtype.itemsize
            if len(raw) != expected:
                raise TensorFormatError("raw contents hold %d bytes but shape %s of %s needs %d"
                                        % (len(raw), _fmt(shape), datatype, expected))
            flat = np.frombuffer(raw, dtype=self.dtype)
        else:
            values = getattr(contents, self.contents_field)
            if len(values) != n * d:
                raise TensorFormatError("contents hold %d elements but shape %s needs %d"
                                        % (len(values), _fmt(shape), n * d))
            flat = np.asarray(values, dtype=self.dtype)
        return flat.reshape(n, d).astype(self.dtype.newbyteorder("="), copy=True)

    def encode(self, outputs):
        """(shape, raw bytes) of a batch of vectors (or scalars, as vectors of one element)."""
        rows = [np.atleast_1d(np.asarray(v)) for v in outputs]
        if not rows:
            raise TensorFormatError("empty batch")
        d = rows[0].shape[0]
        for r in rows:
            if r.ndim != 1:
                raise TensorFormatError("each output must be a number or a 1-D vector, got shape %s" % (r.shape,))
            if r.shape[0] != d:
                raise TensorFormatError("vectors in one batch must have equal length: got %d and %d"
                                        % (r.shape[0], d))
            if not (np.issubdtype(r.dtype, np.number) or r.dtype == np.bool_):
                raise TensorFormatError("output of dtype %s is not numeric" % r.dtype)
        data = np.stack(rows).astype(self.dtype, casting="unsafe")
        return [len(rows), d], data.tobytes()


class BytesType(TensorType):
    """Variable-length elements: a batch is a list of ``bytes`` or of ``str`` (UTF-8)."""

    def __init__(self, clipper_name, text):
        super().__init__(clipper_name, "BYTES")
        self.text = text

    def _from_bytes(self, b):
        # Java's new String(bytes, UTF_8) replaces malformed input the same way
        return b.decode("utf-8", errors="replace") if self.text else bytes(b)

    def decode(self, datatype, shape, raw=None, contents=None):
        self._require_datatype(datatype)
        shape = list(shape)
        n = _batch_size(shape)
        if len(shape) == 2 and shape[1] != 1:
            raise TensorFormatError("BYTES input shape %s must be [N] or [N, 1]" % _fmt(shape))
        if raw is None:
            values = contents.bytes_contents
            if len(values) != n:
                raise TensorFormatError("contents hold %d elements but shape %s needs %d"
                                        % (len(values), _fmt(shape), n))
            return [self._from_bytes(b) for b in values]
        out = []
        pos = 0
        view = memoryview(raw)
        for i in range(n):
            if len(view) - pos < 4:
                raise TensorFormatError("raw BYTES contents end before element %d of %d" % (i, n))
            (length,) = struct.unpack_from("<I", view, pos)
            pos += 4
            if length > len(view) - pos:
                raise TensorFormatError("BYTES element %d declares length %d but only %d bytes remain"
                                        % (i, length, len(view) - pos))
            out.append(self._from_bytes(view[pos:pos + length].tobytes()))
            pos += length
        if pos != len(view):
            raise TensorFormatError("raw BYTES contents hold %d bytes beyond the %d elements of shape %s"
                                    % (len(view) - pos, n, _fmt(shape)))
        return out

    def encode(self, outputs):
        """(shape, raw bytes): str as UTF-8, bytes as they are, numbers rendered as text."""
        if not outputs:
            raise TensorFormatError("empty batch")
        parts = []
        for v in outputs:
            if isinstance(v, (bytes, bytearray, memoryview)):
                b = bytes(v)
            elif isinstance(v, str):
                b = v.encode("utf-8")
            elif isinstance(v, (numbers.Number, np.generic)) and not isinstance(v, np.void):
                b = str(v.item() if isinstance(v, np.generic) else v).encode("utf-8")
            else:
                raise TensorFormatError("output of type %s is neither str, bytes nor a number" % type(v).__name__)
            parts.append(struct.pack("<I", len(b)))
            parts.append(b)
        return [len(outputs)], b"".join(parts)


INTS = NumericType("ints", "INT32", np.int32, "int_contents")
FLOATS = NumericType("floats", "FP32", np.float32, "fp32_contents")
DOUBLES = NumericType("doubles", "FP64", np.float64, "fp64_contents")
BYTES = BytesType("bytes", text=False)
STRINGS = BytesType("strings", text=True)

_BY_NAME = {t.clipper_name: t for t in (INTS, FLOATS, DOUBLES, BYTES, STRINGS)}


def tensor_type(name):
    """The type named ``name`` (a TensorType passes through); ValueError naming the accepted ones."""
    if isinstance(name, TensorType):
        return name
    t = _BY_NAME.get(str(name).lower()) if name is not None else None
    if t is None:
        raise ValueError("unknown input type '%s': expected one of ints, floats, doubles, bytes, strings" % name)
    return t

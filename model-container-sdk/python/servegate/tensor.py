"""Clipper's five input types and their Open Inference Protocol encoding, as in the Java SDK.

A batch of N numeric vectors of equal length d travels as one tensor of shape [N, d]
(INT32, FP32 or FP64, little-endian, row-major); strings and byte strings travel as a BYTES
tensor of shape [N] whose raw form prefixes each element with its 4-byte little-endian length,
or, when every element has the same length L, as one UINT8 tensor [N, ...] of N * L bytes.
Decoding accepts the raw forms and the typed ``contents`` form; raw contents are read where
they lie (a ``memoryview`` of the received message), without a copy per element.
"""

import collections.abc
import math
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
        """(shape, raw bytes) of a batch of vectors (or scalars, as vectors of one element): a numpy
        array [N] or [N, d] is converted in one step, a sequence row by row."""
        if isinstance(outputs, np.ndarray) and outputs.ndim in (1, 2) and _numeric(outputs.dtype):
            if len(outputs) == 0:
                raise TensorFormatError("empty batch")
            data = np.ascontiguousarray(outputs.reshape(len(outputs), -1).astype(self.dtype, casting="unsafe"))
            return list(data.shape), memoryview(data).cast("B")
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
            if not _numeric(r.dtype):
                raise TensorFormatError("output of dtype %s is not numeric" % r.dtype)
        data = np.stack(rows).astype(self.dtype, casting="unsafe")
        return [len(rows), d], memoryview(data).cast("B")


class BytesBatch(collections.abc.Sequence):
    """A batch of byte strings in the buffer they arrived in: ``batch[i]`` is the i-th element as
    ``bytes`` (a copy of that element only), and when every element has the same length L,
    ``array()`` is the whole batch as a read-only uint8 numpy array [N, L] over that buffer, with
    no copy at all (strided when the elements carry length prefixes)."""

    def __init__(self, buffer, starts, lengths):
        self._buffer = buffer
        self._starts = starts
        self._lengths = lengths

    @classmethod
    def of(cls, elements):
        """A batch holding copies of ``elements`` (a sequence of bytes-like objects) in one buffer."""
        return cls(*_packed(elements))

    def __len__(self):
        return len(self._starts)

    def __getitem__(self, i):
        if isinstance(i, slice):  # a sub-batch, still over the received buffer (row isolation splits batches)
            return BytesBatch(self._buffer, self._starts[i], self._lengths[i])
        start = self._starts[i]
        return self._buffer[start:start + self._lengths[i]].tobytes()

    @property
    def element_length(self):
        """The length every element has, or None when they differ."""
        first = self._lengths[0]
        return first if all(n == first for n in self._lengths) else None

    def array(self):
        """The batch as a read-only uint8 array [N, L] viewing the received bytes; ValueError when the
        elements differ in length."""
        length = self.element_length
        if length is None:
            raise ValueError("the %d elements of this batch differ in length; array() needs one length" % len(self))
        stride = self._starts[1] - self._starts[0] if len(self) > 1 else length
        if any(b - a != stride for a, b in zip(self._starts, self._starts[1:])):
            return np.stack([np.frombuffer(self._buffer, np.uint8, length, s) for s in self._starts])
        return np.ndarray((len(self), length), np.uint8, self._buffer, self._starts[0], (stride, 1))

    def __repr__(self):
        length = self.element_length
        return "BytesBatch(%d elements of %s bytes)" % (len(self), length if length is not None else "varying")


class BytesType(TensorType):
    """Variable-length elements: a batch of ``bytes`` is a :class:`BytesBatch`, of ``str`` (UTF-8) a list."""

    def __init__(self, clipper_name, text):
        super().__init__(clipper_name, "BYTES")
        self.text = text

    def _batch(self, buffer, starts, lengths):
        if self.text:  # Java's new String(bytes, UTF_8) replaces malformed input the same way
            return [str(buffer[s:s + n], "utf-8", "replace") for s, n in zip(starts, lengths)]
        return BytesBatch(buffer, starts, lengths)

    def decode(self, datatype, shape, raw=None, contents=None):
        shape = list(shape)
        if datatype == "UINT8":
            return self._decode_fixed(shape, raw, contents)
        self._require_datatype(datatype)
        n = _batch_size(shape)
        if len(shape) == 2 and shape[1] != 1:
            raise TensorFormatError("BYTES input shape %s must be [N] or [N, 1]" % _fmt(shape))
        if raw is None:
            values = contents.bytes_contents
            if len(values) != n:
                raise TensorFormatError("contents hold %d elements but shape %s needs %d"
                                        % (len(values), _fmt(shape), n))
            return self._batch(*_packed(values))
        view = memoryview(raw)
        uniform = _uniform_length(view, n)
        if uniform is not None:  # the usual batch of equal-sized inputs: no loop over the elements
            return self._batch(view, list(range(4, len(view), uniform + 4)), [uniform] * n)
        starts, lengths = [], []
        pos = 0
        for i in range(n):
            if len(view) - pos < 4:
                raise TensorFormatError("raw BYTES contents end before element %d of %d" % (i, n))
            (length,) = struct.unpack_from("<I", view, pos)
            pos += 4
            if length > len(view) - pos:
                raise TensorFormatError("BYTES element %d declares length %d but only %d bytes remain"
                                        % (i, length, len(view) - pos))
            starts.append(pos)
            lengths.append(length)
            pos += length
        if pos != len(view):
            raise TensorFormatError("raw BYTES contents hold %d bytes beyond the %d elements of shape %s"
                                    % (len(view) - pos, n, _fmt(shape)))
        return self._batch(view, starts, lengths)

    def _decode_fixed(self, shape, raw, contents):
        """UINT8 [N, d1, ...]: N elements of d1 * ... bytes each, back to back."""
        if len(shape) == 0:
            raise TensorFormatError("UINT8 input shape [] has no batch dimension")
        n = _batch_size(shape[:1])
        if any(d < 0 for d in shape[1:]):
            raise TensorFormatError("invalid dimension in UINT8 input shape %s" % _fmt(shape))
        length = math.prod(shape[1:])
        if raw is not None:
            view = memoryview(raw)
            if len(view) != n * length:
                raise TensorFormatError("raw contents hold %d bytes but shape %s of UINT8 needs %d"
                                        % (len(view), _fmt(shape), n * length))
        else:
            values = contents.uint_contents
            if len(values) != n * length:
                raise TensorFormatError("contents hold %d elements but shape %s needs %d"
                                        % (len(values), _fmt(shape), n * length))
            if values and max(values) > 255:
                raise TensorFormatError("UINT8 contents hold %d, beyond 255" % max(values))
            view = memoryview(np.asarray(values, np.uint8).tobytes())
        return self._batch(view, [i * length for i in range(n)], [length] * n)

    def encode(self, outputs):
        """(shape, raw bytes): str as UTF-8, bytes as they are, numbers rendered as text."""
        if isinstance(outputs, np.ndarray) and outputs.ndim == 1 and _numeric(outputs.dtype):
            outputs = outputs.tolist()  # Python numbers render as the Java SDK renders them
        if len(outputs) == 0:
            raise TensorFormatError("empty batch")
        encoded = [v.encode("utf-8") if type(v) is str else _element_bytes(v) for v in outputs]
        return [len(encoded)], b"".join(struct.pack("<I", len(b)) + b for b in encoded)


def _element_bytes(v):
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (numbers.Number, np.generic)) and not isinstance(v, np.void):
        return str(v.item() if isinstance(v, np.generic) else v).encode("utf-8")
    raise TensorFormatError("output of type %s is neither str, bytes nor a number" % type(v).__name__)


def _uniform_length(view, n):
    """L when ``view`` is exactly n length-prefixed elements of L bytes each, else None."""
    if len(view) < 4:
        return None
    (first,) = struct.unpack_from("<I", view, 0)
    if (first + 4) * n != len(view):
        return None
    prefixes = np.ndarray((n,), "<u4", view, 0, (first + 4,))
    return first if bool((prefixes == first).all()) else None


def _packed(elements):
    """(buffer, starts, lengths) of ``elements`` copied back to back into one buffer."""
    lengths = [len(e) for e in elements]
    starts = [0] * len(lengths)
    for i in range(1, len(lengths)):
        starts[i] = starts[i - 1] + lengths[i - 1]
    return memoryview(b"".join(elements)), starts, lengths


def _numeric(dtype):
    return np.issubdtype(dtype, np.number) or dtype == np.bool_


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

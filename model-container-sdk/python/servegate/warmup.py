"""Warm-up before ready, as Triton's ``model_warmup``: the predictor runs on every batch size it
will be sent before the container says it is ready, so that one-off costs (CUDA contexts, cuDNN's
autotuning of each new shape, lazy allocations) are paid before the gateway measures or sends
anything. Each size runs ``runs`` times: the first run's time is the cold cost, the last the warm one.
"""

import logging
import time

import numpy as np

from servegate.tensor import TensorFormatError

LOG = logging.getLogger("servegate")

# ModelMetadata parameters that report the warm-up (times as comma-separated integers, one per size)
WARMUP_BATCH_SIZES = "servegate_warmup_batch_sizes"
WARMUP_FIRST_NS = "servegate_warmup_first_ns"
WARMUP_LAST_NS = "servegate_warmup_last_ns"


def parse_batch_sizes(text):
    """``"1,2,4"`` -> [1, 2, 4]; ``"none"`` or ``""`` -> [] (no warm-up); ValueError on anything else."""
    text = str(text).strip().lower()
    if text in ("", "none"):
        return []
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError("warm-up batch sizes must be comma-separated integers or 'none', got '%s'" % text) from None


class WarmupPlan:
    """What to warm: ``batch_sizes`` (default every size from 1 to ``max_batch_size``, or 1 when the
    container declares none), ``runs`` per size, and one ``sample`` input repeated in each batch
    (default zeros of the declared input: ``input_length`` values or bytes). A container whose input
    cannot be made up (no sample, no declared length) is not warmed, and says so."""

    def __init__(self, input_type, input_length, max_batch_size, batch_sizes=None, runs=2, sample=None):
        if batch_sizes is None:
            batch_sizes = list(range(1, max_batch_size + 1)) if max_batch_size > 0 else [1]
        batch_sizes = sorted(set(int(b) for b in batch_sizes))
        if batch_sizes and batch_sizes[0] <= 0:
            raise ValueError("warm-up batch sizes must be positive, got %d" % batch_sizes[0])
        if batch_sizes and 0 < max_batch_size < batch_sizes[-1]:
            raise ValueError("warm-up batch size %d exceeds max_batch_size %d" % (batch_sizes[-1], max_batch_size))
        if int(runs) <= 0:
            raise ValueError("warm-up runs must be positive, got %s" % runs)
        self.input_type = input_type
        self.batch_sizes = batch_sizes
        self.runs = int(runs)
        self.sample = _sample(input_type, input_length, sample)

    def batch(self, size):
        """A batch of ``size`` copies of the sample, decoded as a request's would be."""
        t = self.input_type
        if t.numeric:
            values = np.tile(np.asarray(self.sample, t.dtype).reshape(1, -1), (size, 1))
            return t.decode(t.datatype, list(values.shape), raw=values.tobytes())
        raw = len(self.sample).to_bytes(4, "little") + self.sample
        return t.decode(t.datatype, [size], raw=raw * size)

    def run(self, predict, name):
        """Runs ``predict`` (batch -> anything) over the plan; returns the report (None when the
        sample could not be made up). Exceptions of ``predict`` propagate: a model that cannot
        answer its own warm-up is not ready."""
        if not self.batch_sizes:
            LOG.info("model '%s': warm-up off", name)
            return None
        if self.sample is None:
            LOG.warning("model '%s' is not warmed up: its input type '%s' declares no length to make up an input "
                        "from; give a warm-up input (warmup_input / WARMUP_INPUT_FILE)", name, self.input_type)
            return None
        report = WarmupReport()
        for size in self.batch_sizes:
            batch = self.batch(size)
            times = []
            for _ in range(self.runs):
                start = time.monotonic_ns()
                predict(batch)
                times.append(time.monotonic_ns() - start)
            report.add(size, times[0], times[-1])
        LOG.info("model '%s' warmed up in %.0f ms: %s", name, report.total_ns / 1e6, report.describe())
        return report


class WarmupReport:
    """Per batch size, the first (cold) and last (warm) time of the warm-up."""

    def __init__(self):
        self.batch_sizes, self.first_ns, self.last_ns = [], [], []
        self.total_ns = 0

    def add(self, size, first_ns, last_ns):
        self.batch_sizes.append(size)
        self.first_ns.append(first_ns)
        self.last_ns.append(last_ns)
        self.total_ns += first_ns + last_ns

    def describe(self):
        return "; ".join("batch %d: %.1f ms, then %.1f ms" % (b, f / 1e6, w / 1e6)
                         for b, f, w in zip(self.batch_sizes, self.first_ns, self.last_ns))

    def parameters(self):
        """{ModelMetadata parameter name: value} of this report."""
        return {WARMUP_BATCH_SIZES: ",".join(map(str, self.batch_sizes)),
                WARMUP_FIRST_NS: ",".join(map(str, self.first_ns)),
                WARMUP_LAST_NS: ",".join(map(str, self.last_ns))}


def _sample(input_type, input_length, sample):
    """One input in its raw form: numbers for numeric types, bytes otherwise; None when unknown."""
    if sample is None:
        if input_length <= 0:
            return None
        return np.zeros(input_length, input_type.dtype) if input_type.numeric else bytes(input_length)
    if input_type.numeric:
        if isinstance(sample, (bytes, bytearray, memoryview)):  # the raw little-endian form, as in a file
            sample = np.frombuffer(sample, input_type.dtype)
        values = np.asarray(sample, input_type.dtype).reshape(-1)
        if input_length > 0 and values.size != input_length:
            raise TensorFormatError("the warm-up input has %d values; the model expects %d" % (values.size, input_length))
        return values
    data = sample.encode("utf-8") if isinstance(sample, str) else bytes(sample)
    if input_length > 0 and len(data) != input_length:
        raise TensorFormatError("the warm-up input has %d bytes; the model expects %d" % (len(data), input_length))
    return data

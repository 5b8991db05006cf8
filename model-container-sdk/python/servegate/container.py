"""The Open Inference Protocol (KServe v2) gRPC server of one model, as the Java SDK's ModelContainer."""

import asyncio
import concurrent.futures
import logging
import os
import signal
import sys
import threading
import time

import grpc
from google.protobuf.message import DecodeError

from servegate import rows, wire
from servegate.oip import health_pb, pb
from servegate.services import PLATFORM, Abort, HealthService, OipService, bounded
from servegate.tensor import STRINGS, BytesBatch, TensorFormatError, tensor_type
from servegate.warmup import WarmupPlan, parse_batch_sizes

LOG = logging.getLogger("servegate")

OUTPUT_NAME = "output"
SERVICE_TIME_NS = "servegate_service_time_ns"
BATCH_SIZE = "servegate_batch_size"
# ModelMetadata parameters besides the warm-up's (servegate.warmup)
MAX_BATCH_SIZE = "servegate_max_batch_size"
INPUT_BYTES = "servegate_input_bytes"
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024


def _invalid(message):
    return Abort(grpc.StatusCode.INVALID_ARGUMENT, message)


class ModelContainer:
    """Serves ``predict_batch`` over OIP gRPC.

    ``predict_batch(inputs)`` gets one batch and returns one output per input. Numeric inputs
    (ints, floats, doubles) arrive as one numpy array of shape [N, d] (int32, float32, float64),
    strings as a list of ``str``, bytes as a :class:`~servegate.tensor.BytesBatch` (a sequence of
    ``bytes`` whose ``array()`` is the batch as one uint8 array, without a copy). Outputs are encoded
    as ``output_type`` (default strings: ``str``, ``bytes`` or numbers rendered as text); a numpy
    array of outputs is encoded in one step.

    ``input_length`` declares the vector length of numeric inputs or the byte length of each
    ``bytes`` input; ``max_batch_size`` the largest batch the model takes (0: undeclared). Requests
    are validated against both before the predictor sees them. ``max_message_bytes`` (default
    16 MiB, or room for a full batch when both are declared) bounds requests and responses.

    Before it is ready the container warms up (:class:`~servegate.warmup.WarmupPlan`): by default
    every batch size up to ``max_batch_size`` (1 when undeclared), ``warmup_runs`` times each, on
    zeros of the declared input or on ``warmup_input``; ``warmup_batch_sizes=[]`` turns it off.
    ModelMetadata reports the times in its parameters.

    Batches run on ``concurrency`` threads (one by default, as Clipper's containers do); beyond
    ``max_queued_batches`` waiting batches, requests get RESOURCE_EXHAUSTED. ``close()`` (SIGTERM
    under ``run_until_shutdown``) stops accepting calls, lets in-flight batches finish within
    ``drain_seconds``, then stops.

    Besides OIP it serves the standard ``grpc.health.v1.Health`` (Kubernetes' grpc probe), as the
    Java SDK does: "" and the OIP service are SERVING exactly while ServerReady is true, and
    NOT_SERVING from the start of draining (open Watch streams get it, then end).
    """

    def __init__(self, predict_batch, name, version="1", input_type="floats", output_type=STRINGS,
                 host="0.0.0.0", port=8001, input_length=-1, max_batch_size=0, max_message_bytes=None,
                 concurrency=1, max_queued_batches=1024, drain_seconds=30.0, warmup_batch_sizes=None,
                 warmup_runs=2, warmup_input=None, isolate_rows=True):
        if not callable(predict_batch):
            raise TypeError("predict_batch must be callable")
        if not name or not str(name).strip():
            raise ValueError("a model name is required (name= or MODEL_NAME)")
        if not version or not str(version).strip():
            raise ValueError("a model version is required (version= or MODEL_VERSION)")
        if max_message_bytes is None:
            max_message_bytes = self._default_max_message_bytes(tensor_type(input_type), input_length, max_batch_size)
        for what, value in (("concurrency", concurrency), ("max_message_bytes", max_message_bytes),
                            ("max_queued_batches", max_queued_batches)):
            if int(value) <= 0:
                raise ValueError("%s must be positive, got %s" % (what, value))
        if int(max_batch_size) < 0:
            raise ValueError("max_batch_size must be 0 (undeclared) or positive, got %s" % max_batch_size)
        if not 0 <= int(port) <= 65535:
            raise ValueError("port must be in 0..65535, got %s" % port)
        self.predict_batch = predict_batch
        self.isolate_rows = bool(isolate_rows)
        self.name = str(name)
        self.version = str(version)
        self.input_type = tensor_type(input_type)
        self.output_type = tensor_type(output_type)
        self.host = host
        self.input_length = int(input_length)
        self.max_batch_size = int(max_batch_size)
        self.max_message_bytes = int(max_message_bytes)
        self.concurrency = int(concurrency)
        self.max_queued_batches = int(max_queued_batches)
        self.drain_seconds = float(drain_seconds)
        self.warmup = WarmupPlan(self.input_type, self.input_length, self.max_batch_size,
                                 batch_sizes=warmup_batch_sizes, runs=warmup_runs, sample=warmup_input)
        self.warmup_report = None
        self._requested_port = int(port)
        self._port = None
        self._ready = False
        self._pending = 0  # batches submitted and not finished; touched on the event loop only
        self._pool = concurrent.futures.ThreadPoolExecutor(self.concurrency, thread_name_prefix="predict-" + self.name)
        self._loop = None
        self._thread = None
        self._server = None
        self._stopped = threading.Event()
        self.health_changed = None  # an asyncio.Event of the loop, replaced on every change

    @staticmethod
    def _default_max_message_bytes(input_type, input_length, max_batch_size):
        """16 MiB, or a full batch of declared inputs and 1 MiB for the rest when that is more."""
        if input_length <= 0 or max_batch_size <= 0:
            return DEFAULT_MAX_MESSAGE_BYTES
        element = input_length * (input_type.dtype.itemsize if input_type.numeric else 1) + 4
        return max(DEFAULT_MAX_MESSAGE_BYTES, max_batch_size * element + (1 << 20))

    @property
    def port(self):
        """The bound port (useful after binding port 0)."""
        return self._port

    @property
    def ready(self):
        """Whether ServerReady and ModelReady say yes: after the warm-up, until draining starts."""
        return self._ready

    @property
    def stopping(self):
        return self._stopped.is_set()

    # ------------------------------------------------------------------ lifecycle

    def start(self):
        """Binds the port, serves (live, not ready) on a background event loop, warms the model up,
        then becomes ready. Returns when ready; raises (and stops serving) when the warm-up fails."""
        self._loop = asyncio.new_event_loop()
        started = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run_loop, args=(started,), name="oip-" + self.name, daemon=True)
        self._thread.start()
        try:
            started.result()
        except BaseException:
            self._loop = None  # nothing to close
            raise
        LOG.info("model '%s' listening on port %d; ready after its warm-up", self.name, self._port)
        try:
            self.warmup_report = self._pool.submit(self.warmup.run, self._predict_whole, self.name).result()
        except BaseException as e:
            self.close()
            raise RuntimeError("warm-up of model '%s' failed: %s" % (self.name, getattr(e, "message", e))) from e
        self._set_ready(True)
        LOG.info("model '%s' serving Open Inference Protocol on port %d", self.name, self._port)
        return self

    def _run_loop(self, started):
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._start_server())
        except BaseException as e:  # report bind failures to start()
            started.set_exception(e)
            self._loop.close()
            return
        started.set_result(None)
        self._loop.run_forever()
        self._loop.close()

    async def _start_server(self):
        self._server = grpc.aio.server(options=[
            ("grpc.max_receive_message_length", self.max_message_bytes),
            ("grpc.max_send_message_length", self.max_message_bytes),
            ("grpc.so_reuseport", 0),  # a port in use is an error, as in Java, not a shared listener
        ])
        self._server.add_generic_rpc_handlers((OipService(self).handler(), HealthService(self).handler()))
        self.health_changed = asyncio.Event()
        address = "%s:%d" % (_bracket(self.host), self._requested_port)
        self._port = self._server.add_insecure_port(address)
        if self._port == 0:
            raise OSError("cannot bind %s" % address)
        await self._server.start()

    def close(self):
        """Stops accepting calls, waits for in-flight batches up to ``drain_seconds``, then stops."""
        if self._loop is None or self._stopped.is_set():
            return
        self._stopped.set()
        self._set_ready(False)
        # grpc's stop(grace) refuses new calls at once and cancels those still running after the grace
        asyncio.run_coroutine_threadsafe(self._server.stop(self.drain_seconds), self._loop).result()
        if self._pending:
            LOG.warning("drain timeout of %ss passed with %d batches still running; their calls were cancelled",
                        self.drain_seconds, self._pending)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def run_until_shutdown(self):
        """Starts, prints ``READY port=N`` once ready (after the warm-up) for whoever launched the
        process, and serves until SIGTERM or SIGINT; then drains and returns."""
        stop = threading.Event()
        previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.start()
            print("READY port=%d" % self._port, flush=True)
            while not stop.wait(1.0):
                pass
            LOG.info("model '%s' draining", self.name)
            self.close()
        finally:
            for s, h in previous.items():
                signal.signal(s, h)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    def _set_ready(self, ready):
        self._ready = ready
        self._loop.call_soon_threadsafe(self._notify_health)

    def _notify_health(self):
        changed, self.health_changed = self.health_changed, asyncio.Event()
        changed.set()

    def health_status(self):
        status = health_pb.HealthCheckResponse
        return status.SERVING if self._ready else status.NOT_SERVING

    # ------------------------------------------------------------------ request handling

    def require_model(self, name, version):
        if name != self.name:
            raise Abort(grpc.StatusCode.NOT_FOUND, "unknown model '%s': this container serves '%s'"
                        % (bounded(name), self.name))
        if version and version != self.version:
            raise Abort(grpc.StatusCode.NOT_FOUND, "unknown version '%s' of model '%s': this container serves "
                        "version '%s'" % (bounded(version), self.name, self.version))

    def metadata(self):
        response = pb.ModelMetadataResponse(
            name=self.name, versions=[self.version], platform=PLATFORM,
            inputs=[self.tensor_metadata("input", self.input_type, self.input_length)],
            outputs=[self.tensor_metadata(OUTPUT_NAME, self.output_type, -1)])
        if self.max_batch_size > 0:
            response.parameters[MAX_BATCH_SIZE].int64_param = self.max_batch_size
        if not self.input_type.numeric and self.input_length > 0:
            response.parameters[INPUT_BYTES].int64_param = self.input_length
        if self.warmup_report is not None:
            for key, value in self.warmup_report.parameters().items():
                response.parameters[key].string_param = value
        return response

    def tensor_metadata(self, tensor_name, tensor_type_, length):
        shape = [-1]
        if tensor_type_.numeric:
            shape.append(length if length > 0 else -1)
        return pb.ModelMetadataResponse.TensorMetadata(name=tensor_name, datatype=tensor_type_.datatype, shape=shape)

    def parse(self, data):
        """(the request without its raw contents, the raw contents as views into ``data``)."""
        try:
            rest, raws = wire.split_bytes_field(data, wire.RAW_INPUT_CONTENTS_FIELD)
            return pb.ModelInferRequest.FromString(rest), raws
        except (wire.WireFormatError, DecodeError) as e:
            raise _invalid("malformed ModelInferRequest: %s" % e)

    def decode(self, request, raws):
        self.require_model(request.model_name, request.model_version)
        if len(request.inputs) != 1:
            raise _invalid("model '%s' takes exactly 1 input tensor, the request has %d"
                           % (self.name, len(request.inputs)))
        for requested in request.outputs:
            if requested.name != OUTPUT_NAME:
                raise _invalid("model '%s' has no output '%s'; its only output is '%s'"
                               % (self.name, bounded(requested.name), OUTPUT_NAME))
        tensor = request.inputs[0]
        if len(raws) > 1:
            raise _invalid("raw_input_contents has %d entries for 1 input tensor" % len(raws))
        if raws and tensor.HasField("contents"):
            raise _invalid("input '%s' has both contents and raw_input_contents; send one of them"
                           % bounded(tensor.name))
        try:
            if raws:
                batch = self.input_type.decode(tensor.datatype, tensor.shape, raw=raws[0])
            else:
                batch = self.input_type.decode(tensor.datatype, tensor.shape, contents=tensor.contents)
        except TensorFormatError as e:
            raise _invalid("input '%s' of model '%s': %s" % (bounded(tensor.name), self.name, e))
        if 0 < self.max_batch_size < len(batch):
            raise _invalid("a batch of %d exceeds the max_batch_size %d of model '%s'"
                           % (len(batch), self.max_batch_size, self.name))
        if self.input_length > 0:
            if self.input_type.numeric and batch.shape[1] != self.input_length:
                raise _invalid("input '%s' of model '%s' has vectors of length %d; the model expects %d"
                               % (bounded(tensor.name), self.name, batch.shape[1], self.input_length))
            if isinstance(batch, BytesBatch) and batch.element_length != self.input_length:
                wrong = next(len(x) for x in batch if len(x) != self.input_length)
                raise _invalid("input '%s' of model '%s' has an element of %d bytes; the model expects %d"
                               % (bounded(tensor.name), self.name, wrong, self.input_length))
        return batch

    def _predict_whole(self, batch):
        """The warm-up's: a failure of any row fails it, so a model that raises fails the start."""
        return self.predict(batch, isolate_rows=False)

    def predict(self, batch, isolate_rows=None):
        """Runs on a predictor thread: (shape, raw output, service nanoseconds, per-row errors or None),
        or raises Abort (INTERNAL; INVALID_ARGUMENT for an InvalidInput the rows were not isolated for)."""
        start = time.monotonic_ns()
        errors = None
        try:
            if self.isolate_rows if isolate_rows is None else isolate_rows:
                outputs, errors = rows.predict(self.predict_batch, batch, self._check_count,
                                               self.output_type.datatype != "BYTES")
            else:
                outputs = self.predict_batch(batch)
        except Abort:
            raise
        except rows.InvalidInput as e:
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT, "model '%s' rejected the batch: %s" % (self.name, e))
        except Exception as e:
            LOG.warning("predictor of '%s' failed on a batch of %d", self.name, len(batch), exc_info=True)
            raise Abort(grpc.StatusCode.INTERNAL, "predictor of model '%s' failed: %r" % (self.name, e))
        service_ns = time.monotonic_ns() - start
        if errors is None:
            self._check_count(outputs, len(batch))
        try:
            shape, raw = self.output_type.encode(outputs)
        except (TensorFormatError, ValueError, TypeError) as e:
            raise Abort(grpc.StatusCode.INTERNAL, "outputs of model '%s' cannot be encoded as %s: %s"
                        % (self.name, self.output_type.datatype, e))
        return shape, raw, service_ns, errors

    def _check_count(self, outputs, n):
        """Raises Abort(INTERNAL) unless ``outputs`` holds exactly ``n`` outputs."""
        count = None
        if outputs is not None:
            try:
                count = len(outputs)
            except TypeError:
                pass
        if count != n:
            got = "None" if outputs is None else ("%d outputs" % count if count is not None else type(outputs).__name__)
            raise Abort(grpc.StatusCode.INTERNAL,
                        "predictor of model '%s' returned %s for a batch of %d; it must return exactly one output "
                        "per input" % (self.name, got, n))

    async def infer(self, data):
        """One ModelInfer call: the serialized request in, the serialized response out."""
        if not self._ready:
            raise Abort(grpc.StatusCode.UNAVAILABLE, "model '%s' is not ready%s" % (
                self.name, "; it is draining" if self.stopping else " yet; it is warming up"))
        request, raws = self.parse(data)
        batch = self.decode(request, raws)
        if self._pending >= self.concurrency + self.max_queued_batches:
            raise Abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "model '%s' has too many batches queued; retry later"
                        % self.name)
        self._pending += 1
        try:
            shape, raw, service_ns, errors = await asyncio.get_running_loop().run_in_executor(
                self._pool, self.predict, batch)
        finally:
            self._pending -= 1
        response = pb.ModelInferResponse(model_name=self.name, model_version=self.version, id=request.id)
        response.parameters[SERVICE_TIME_NS].int64_param = service_ns
        response.parameters[BATCH_SIZE].int64_param = len(batch)
        response.outputs.add(name=OUTPUT_NAME, datatype=self.output_type.datatype, shape=shape)
        raws = [raw]
        if errors is not None:
            error_shape, error_raw = STRINGS.encode(errors)
            response.outputs.add(name=rows.ROW_ERRORS, datatype=STRINGS.datatype, shape=error_shape)
            raws.append(error_raw)
        return wire.append_bytes_field(response.SerializeToString(), wire.RAW_OUTPUT_CONTENTS_FIELD, raws)


def _bracket(host):
    return "[%s]" % host if ":" in host and not host.startswith("[") else host


def _env(key, default):
    value = os.environ.get(key)
    return value if value not in (None, "") else default


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def serve(predict_batch, name=None, version=None, input_type="floats", port=None, host=None, **options):
    """Serves ``predict_batch`` until SIGTERM/SIGINT, then drains and exits 0 (also when a batch
    outlives the drain timeout: that batch's caller gets CANCELLED). Exits 1 when the warm-up fails.

    ``name``, ``version``, ``port`` and ``host`` default to the environment variables
    MODEL_NAME, MODEL_VERSION (1), PORT (8001) and HOST (0.0.0.0), as the Java ContainerOptions;
    MAX_MESSAGE_BYTES, CONCURRENCY, DRAIN_SECONDS, MAX_BATCH_SIZE, WARMUP_BATCH_SIZES (comma-separated,
    or ``none``), WARMUP_RUNS and WARMUP_INPUT_FILE (one input's raw bytes) fill the options
    not passed. Other keyword options go to :class:`ModelContainer`.
    """
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    for option, key, parse in (("max_message_bytes", "MAX_MESSAGE_BYTES", int), ("concurrency", "CONCURRENCY", int),
                               ("drain_seconds", "DRAIN_SECONDS", float), ("max_batch_size", "MAX_BATCH_SIZE", int),
                               ("warmup_batch_sizes", "WARMUP_BATCH_SIZES", parse_batch_sizes),
                               ("warmup_runs", "WARMUP_RUNS", int), ("warmup_input", "WARMUP_INPUT_FILE", _read)):
        if option not in options and _env(key, None) is not None:
            options[option] = parse(_env(key, None))
    container = ModelContainer(
        predict_batch,
        name=name if name is not None else _env("MODEL_NAME", None),
        version=version if version is not None else _env("MODEL_VERSION", "1"),
        input_type=input_type,
        port=int(port if port is not None else _env("PORT", 8001)),
        host=host if host is not None else _env("HOST", "0.0.0.0"),
        **options)
    try:
        container.run_until_shutdown()
    except RuntimeError as e:
        LOG.error("%s", e)
        code = 1
    else:
        code = 0
    # a predictor still running past the drain timeout must not keep the process alive (the
    # interpreter would join its thread at exit), so leave without the interpreter's shutdown
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

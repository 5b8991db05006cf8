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

from servegate import _stubs
from servegate.tensor import STRINGS, TensorFormatError, tensor_type

LOG = logging.getLogger("servegate")

PLATFORM = "servegate-python"
OUTPUT_NAME = "output"
SERVICE_TIME_NS = "servegate_service_time_ns"
BATCH_SIZE = "servegate_batch_size"

pb, pb_grpc = _stubs.load()
health_pb, health_grpc = _stubs.load("health")
OIP_SERVICE = "inference.GRPCInferenceService"
_HEALTH_SERVICES = ("", OIP_SERVICE)  # "" is what Kubernetes' grpc probe asks when it names none


class _Abort(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def _not_found(message):
    return _Abort(grpc.StatusCode.NOT_FOUND, message)


def _invalid(message):
    return _Abort(grpc.StatusCode.INVALID_ARGUMENT, message)


class ModelContainer:
    """Serves ``predict_batch`` over OIP gRPC.

    ``predict_batch(inputs)`` gets one batch and returns one output per input. Numeric inputs
    (ints, floats, doubles) arrive as one numpy array of shape [N, d] (int32, float32, float64),
    strings as a list of ``str``, bytes as a list of ``bytes``. Outputs are encoded as
    ``output_type`` (default strings: ``str``, ``bytes`` or numbers rendered as text).

    Requests are validated before the predictor sees them. Batches run on ``concurrency``
    threads (one by default, as Clipper's containers do); beyond ``max_queued_batches`` waiting
    batches, requests get RESOURCE_EXHAUSTED. ``close()`` (SIGTERM under ``run_until_shutdown``)
    stops accepting calls, lets in-flight batches finish within ``drain_seconds``, then stops.

    Besides OIP it serves the standard ``grpc.health.v1.Health`` (Kubernetes' grpc probe), as the
    Java SDK does: "" and the OIP service are SERVING exactly while ServerReady is true, and
    NOT_SERVING from the start of draining (open Watch streams get it, then end).
    """

    def __init__(self, predict_batch, name, version="1", input_type="floats", output_type=STRINGS,
                 host="0.0.0.0", port=8001, input_length=-1, max_message_bytes=16 * 1024 * 1024,
                 concurrency=1, max_queued_batches=1024, drain_seconds=30.0):
        if not callable(predict_batch):
            raise TypeError("predict_batch must be callable")
        if not name or not str(name).strip():
            raise ValueError("a model name is required (name= or MODEL_NAME)")
        if not version or not str(version).strip():
            raise ValueError("a model version is required (version= or MODEL_VERSION)")
        for what, value in (("concurrency", concurrency), ("max_message_bytes", max_message_bytes),
                            ("max_queued_batches", max_queued_batches)):
            if int(value) <= 0:
                raise ValueError("%s must be positive, got %s" % (what, value))
        if not 0 <= int(port) <= 65535:
            raise ValueError("port must be in 0..65535, got %s" % port)
        self.predict_batch = predict_batch
        self.name = str(name)
        self.version = str(version)
        self.input_type = tensor_type(input_type)
        self.output_type = tensor_type(output_type)
        self.host = host
        self.input_length = int(input_length)
        self.max_message_bytes = int(max_message_bytes)
        self.concurrency = int(concurrency)
        self.max_queued_batches = int(max_queued_batches)
        self.drain_seconds = float(drain_seconds)
        self._requested_port = int(port)
        self._port = None
        self._ready = False
        self._pending = 0  # batches submitted and not finished; touched on the event loop only
        self._pool = concurrent.futures.ThreadPoolExecutor(self.concurrency, thread_name_prefix="predict-" + self.name)
        self._loop = None
        self._thread = None
        self._server = None
        self._stopped = threading.Event()
        self._health_changed = None  # an asyncio.Event of the loop, replaced on every change

    @property
    def port(self):
        """The bound port (useful after binding port 0)."""
        return self._port

    # ------------------------------------------------------------------ lifecycle

    def start(self):
        """Binds the port and starts serving on a background event loop; ready when this returns."""
        self._loop = asyncio.new_event_loop()
        started = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run_loop, args=(started,), name="oip-" + self.name, daemon=True)
        self._thread.start()
        try:
            started.result()
        except BaseException:
            self._loop = None  # nothing to close
            raise
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
            ("grpc.so_reuseport", 0),  # a port in use is an error, as in Java, not a shared listener
        ])
        pb_grpc.add_GRPCInferenceServiceServicer_to_server(_Servicer(self), self._server)
        health_grpc.add_HealthServicer_to_server(_Health(self), self._server)
        self._health_changed = asyncio.Event()
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
        """Starts, prints ``READY port=N`` for whoever launched the process, and serves until
        SIGTERM or SIGINT; then drains and returns."""
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
        changed, self._health_changed = self._health_changed, asyncio.Event()
        changed.set()

    def health_status(self):
        status = health_pb.HealthCheckResponse
        return status.SERVING if self._ready else status.NOT_SERVING

    # ------------------------------------------------------------------ request handling

    def require_model(self, name, version):
        if name != self.name:
            raise _not_found("unknown model '%s': this container serves '%s'" % (name, self.name))
        if version and version != self.version:
            raise _not_found("unknown version '%s' of model '%s': this container serves version '%s'"
                             % (version, self.name, self.version))

    def decode(self, request):
        self.require_model(request.model_name, request.model_version)
        if len(request.inputs) != 1:
            raise _invalid("model '%s' takes exactly 1 input tensor, the request has %d"
                           % (self.name, len(request.inputs)))
        for requested in request.outputs:
            if requested.name != OUTPUT_NAME:
                raise _invalid("model '%s' has no output '%s'; its only output is '%s'"
                               % (self.name, requested.name, OUTPUT_NAME))
        tensor = request.inputs[0]
        raw_count = len(request.raw_input_contents)
        if raw_count > 1:
            raise _invalid("raw_input_contents has %d entries for 1 input tensor" % raw_count)
        try:
            if raw_count == 1:
                batch = self.input_type.decode(tensor.datatype, tensor.shape, raw=request.raw_input_contents[0])
            else:
                batch = self.input_type.decode(tensor.datatype, tensor.shape, contents=tensor.contents)
        except TensorFormatError as e:
            raise _invalid("input '%s' of model '%s': %s" % (tensor.name, self.name, e))
        if self.input_length > 0 and self.input_type.numeric and batch.shape[1] != self.input_length:
            raise _invalid("input '%s' of model '%s' has vectors of length %d; the model expects %d"
                           % (tensor.name, self.name, batch.shape[1], self.input_length))
        return batch

    def predict(self, batch):
        """Runs on a predictor thread: (outputs, service nanoseconds), or raises _Abort(INTERNAL)."""
        start = time.monotonic_ns()
        try:
            outputs = self.predict_batch(batch)
        except Exception as e:
            LOG.warning("predictor of '%s' failed on a batch of %d", self.name, len(batch), exc_info=True)
            raise _Abort(grpc.StatusCode.INTERNAL, "predictor of model '%s' failed: %r" % (self.name, e))
        service_ns = time.monotonic_ns() - start
        count = None
        if outputs is not None:
            try:
                count = len(outputs)
            except TypeError:
                pass
        if count != len(batch):
            got = "None" if outputs is None else ("%d outputs" % count if count is not None else type(outputs).__name__)
            raise _Abort(grpc.StatusCode.INTERNAL,
                         "predictor of model '%s' returned %s for a batch of %d; it must return exactly one output "
                         "per input" % (self.name, got, len(batch)))
        try:
            shape, raw = self.output_type.encode(list(outputs))
        except (TensorFormatError, ValueError, TypeError) as e:
            raise _Abort(grpc.StatusCode.INTERNAL, "outputs of model '%s' cannot be encoded as %s: %s"
                         % (self.name, self.output_type.datatype, e))
        return shape, raw, service_ns

    async def infer(self, request, context):
        try:
            batch = self.decode(request)
        except _Abort as e:
            await context.abort(e.code, e.message)
        if self._pending >= self.concurrency + self.max_queued_batches:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                "model '%s' has too many batches queued; retry later" % self.name)
        self._pending += 1
        try:
            shape, raw, service_ns = await asyncio.get_running_loop().run_in_executor(self._pool, self.predict, batch)
        except _Abort as e:
            await context.abort(e.code, e.message)
        finally:
            self._pending -= 1
        response = pb.ModelInferResponse(model_name=self.name, model_version=self.version, id=request.id)
        response.parameters[SERVICE_TIME_NS].int64_param = service_ns
        response.parameters[BATCH_SIZE].int64_param = len(batch)
        response.outputs.add(name=OUTPUT_NAME, datatype=self.output_type.datatype, shape=shape)
        response.raw_output_contents.append(raw)
        return response

    def tensor_metadata(self, tensor_name, tensor_type_, length):
        shape = [-1]
        if tensor_type_.numeric:
            shape.append(length if length > 0 else -1)
        return pb.ModelMetadataResponse.TensorMetadata(name=tensor_name, datatype=tensor_type_.datatype, shape=shape)


class _Servicer(pb_grpc.GRPCInferenceServiceServicer):
    def __init__(self, container):
        self.c = container

    async def ServerLive(self, request, context):
        return pb.ServerLiveResponse(live=True)

    async def ServerReady(self, request, context):
        return pb.ServerReadyResponse(ready=self.c._ready)

    async def ModelReady(self, request, context):
        try:
            self.c.require_model(request.name, request.version)
        except _Abort as e:
            await context.abort(e.code, e.message)
        return pb.ModelReadyResponse(ready=self.c._ready)

    async def ServerMetadata(self, request, context):
        from servegate import __version__
        return pb.ServerMetadataResponse(name=PLATFORM, version=__version__)

    async def ModelMetadata(self, request, context):
        try:
            self.c.require_model(request.name, request.version)
        except _Abort as e:
            await context.abort(e.code, e.message)
        c = self.c
        return pb.ModelMetadataResponse(
            name=c.name, versions=[c.version], platform=PLATFORM,
            inputs=[c.tensor_metadata("input", c.input_type, c.input_length)],
            outputs=[c.tensor_metadata(OUTPUT_NAME, c.output_type, -1)])

    async def ModelInfer(self, request, context):
        return await self.c.infer(request, context)


class _Health(health_grpc.HealthServicer):
    def __init__(self, container):
        self.c = container

    async def Check(self, request, context):
        if request.service not in _HEALTH_SERVICES:
            await context.abort(grpc.StatusCode.NOT_FOUND, "unknown service '%s'" % request.service)
        return health_pb.HealthCheckResponse(status=self.c.health_status())

    async def Watch(self, request, context):
        if request.service not in _HEALTH_SERVICES:
            yield health_pb.HealthCheckResponse(status=health_pb.HealthCheckResponse.SERVICE_UNKNOWN)
            return
        while True:
            changed = self.c._health_changed
            yield health_pb.HealthCheckResponse(status=self.c.health_status())
            if self.c._stopped.is_set():
                return  # draining: NOT_SERVING was sent; an open stream must not hold up the drain
            await changed.wait()


def _bracket(host):
    return "[%s]" % host if ":" in host and not host.startswith("[") else host


def _env(key, default):
    value = os.environ.get(key)
    return value if value not in (None, "") else default


def serve(predict_batch, name=None, version=None, input_type="floats", port=None, host=None, **options):
    """Serves ``predict_batch`` until SIGTERM/SIGINT, then drains and exits 0 (also when a batch
    outlives the drain timeout: that batch's caller gets CANCELLED).

    ``name``, ``version``, ``port`` and ``host`` default to the environment variables
    MODEL_NAME, MODEL_VERSION (1), PORT (8001) and HOST (0.0.0.0), as the Java ContainerOptions;
    MAX_MESSAGE_BYTES, CONCURRENCY and DRAIN_SECONDS likewise fill the options not passed.
    Other keyword options go to :class:`ModelContainer`.
    """
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    options.setdefault("max_message_bytes", int(_env("MAX_MESSAGE_BYTES", 16 * 1024 * 1024)))
    options.setdefault("concurrency", int(_env("CONCURRENCY", 1)))
    options.setdefault("drain_seconds", float(_env("DRAIN_SECONDS", 30)))
    container = ModelContainer(
        predict_batch,
        name=name if name is not None else _env("MODEL_NAME", None),
        version=version if version is not None else _env("MODEL_VERSION", "1"),
        input_type=input_type,
        port=int(port if port is not None else _env("PORT", 8001)),
        host=host if host is not None else _env("HOST", "0.0.0.0"),
        **options)
    container.run_until_shutdown()
    # a predictor still running past the drain timeout must not keep the process alive (the
    # interpreter would join its thread at exit), so leave without the interpreter's shutdown
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)

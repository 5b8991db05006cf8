"""The Python SDK against a real grpcio client over loopback: every type, every error (each
followed by a request that succeeds), one batch at a time, and drain on SIGTERM."""

import os
import signal
import struct
import subprocess
import sys
import threading
import time

import grpc
import numpy as np
import pytest

import servegate
from servegate.oip import GRPCInferenceServiceStub, pb
from oip_testing import bytes_raw, echo_rows, parse_bytes, request

HERE = os.path.dirname(os.path.abspath(__file__))


def floats_ok(s):
    resp = s.stub.ModelInfer(request("FP32", [1, 3], np.array([1, 2, 3], "<f4").tobytes()))
    assert parse_bytes(resp.raw_output_contents[0]) == [b"1.0,2.0,3.0"]


# ---------------------------------------------------------------------------------- types

@pytest.mark.parametrize("type_name,datatype,dtype,field", [
    ("ints", "INT32", "<i4", "int_contents"),
    ("floats", "FP32", "<f4", "fp32_contents"),
    ("doubles", "FP64", "<f8", "fp64_contents"),
])
def test_numeric_types_raw_and_typed_contents(server_factory, type_name, datatype, dtype, field):
    seen = []

    def predict(batch):
        seen.append((batch.dtype, batch.shape))
        return echo_rows(batch)

    s = server_factory(predict, input_type=type_name)
    values = np.array([[1, -2, 3], [4, 5, -6]], dtype=dtype)
    resp = s.stub.ModelInfer(request(datatype, [2, 3], values.tobytes()))
    expected = [b"1,-2,3", b"4,5,-6"] if type_name == "ints" else [b"1.0,-2.0,3.0", b"4.0,5.0,-6.0"]
    assert parse_bytes(resp.raw_output_contents[0]) == expected
    assert resp.model_name == "m" and resp.model_version == "1" and resp.id == "req-1"
    assert resp.outputs[0].name == "output" and resp.outputs[0].datatype == "BYTES"
    assert list(resp.outputs[0].shape) == [2]
    assert resp.parameters["servegate_batch_size"].int64_param == 2
    assert resp.parameters["servegate_service_time_ns"].int64_param > 0

    contents = pb.InferTensorContents(**{field: values.ravel().tolist()})
    resp = s.stub.ModelInfer(request(datatype, [2, 3], contents=contents))
    assert parse_bytes(resp.raw_output_contents[0]) == expected
    assert seen == [(np.dtype(dtype).newbyteorder("="), (2, 3))] * 2


def test_rank_one_numeric_shape_is_a_batch_of_scalars(server_factory):
    s = server_factory(echo_rows, input_type="ints")
    resp = s.stub.ModelInfer(request("INT32", [3], np.array([7, 8, 9], "<i4").tobytes()))
    assert parse_bytes(resp.raw_output_contents[0]) == [b"7", b"8", b"9"]


@pytest.mark.parametrize("type_name", ["bytes", "strings"])
def test_bytes_and_strings_raw_and_typed_contents(server_factory, type_name):
    seen = []

    def predict(batch):
        seen.append(list(batch))
        return [("%s:%d" % (type(x).__name__, len(x))) for x in batch]

    s = server_factory(predict, input_type=type_name)
    elements = ["héllo".encode(), b"", b"xyz"]
    resp = s.stub.ModelInfer(request("BYTES", [3], bytes_raw(elements)))
    kind = "bytes" if type_name == "bytes" else "str"
    lengths = [6, 0, 3] if type_name == "bytes" else [5, 0, 3]
    assert parse_bytes(resp.raw_output_contents[0]) == [("%s:%d" % (kind, n)).encode() for n in lengths]
    resp = s.stub.ModelInfer(request("BYTES", [3, 1], contents=pb.InferTensorContents(bytes_contents=elements)))
    assert parse_bytes(resp.raw_output_contents[0]) == [("%s:%d" % (kind, n)).encode() for n in lengths]
    expected = elements if type_name == "bytes" else ["héllo", "", "xyz"]
    assert seen == [expected, expected]


@pytest.mark.parametrize("output_type,datatype,dtype", [
    ("floats", "FP32", "<f4"), ("doubles", "FP64", "<f8"), ("ints", "INT32", "<i4")])
def test_numeric_outputs_are_one_n_by_d_tensor(server_factory, output_type, datatype, dtype):
    s = server_factory(lambda batch: [row * 2 for row in batch], input_type="floats", output_type=output_type)
    resp = s.stub.ModelInfer(request("FP32", [2, 2], np.array([[1, 2], [3, 4]], "<f4").tobytes()))
    out = resp.outputs[0]
    assert (out.name, out.datatype, list(out.shape)) == ("output", datatype, [2, 2])
    np.testing.assert_array_equal(np.frombuffer(resp.raw_output_contents[0], dtype), [2, 4, 6, 8])


def test_numbers_render_as_text_in_string_outputs(server_factory):
    s = server_factory(lambda batch: np.argmax(batch, axis=1), input_type="floats")
    resp = s.stub.ModelInfer(request("FP32", [2, 3], np.array([[0, 5, 1], [9, 1, 1]], "<f4").tobytes()))
    assert parse_bytes(resp.raw_output_contents[0]) == [b"1", b"0"]


def test_health_and_metadata(server_factory):
    s = server_factory(echo_rows, input_type="floats", input_length=784, version="3")
    assert s.stub.ServerLive(pb.ServerLiveRequest()).live
    assert s.stub.ServerReady(pb.ServerReadyRequest()).ready
    assert s.stub.ModelReady(pb.ModelReadyRequest(name="m")).ready
    assert s.stub.ModelReady(pb.ModelReadyRequest(name="m", version="3")).ready
    meta = s.stub.ModelMetadata(pb.ModelMetadataRequest(name="m"))
    assert (meta.name, list(meta.versions), meta.platform) == ("m", ["3"], "servegate-python")
    assert (meta.inputs[0].name, meta.inputs[0].datatype, list(meta.inputs[0].shape)) == ("input", "FP32", [-1, 784])
    assert (meta.outputs[0].name, meta.outputs[0].datatype, list(meta.outputs[0].shape)) == ("output", "BYTES", [-1])
    server = s.stub.ServerMetadata(pb.ServerMetadataRequest())
    assert (server.name, server.version) == ("servegate-python", servegate.__version__)
    for call, req in ((s.stub.ModelReady, pb.ModelReadyRequest(name="x")),
                      (s.stub.ModelReady, pb.ModelReadyRequest(name="m", version="2")),
                      (s.stub.ModelMetadata, pb.ModelMetadataRequest(name="x"))):
        with pytest.raises(grpc.RpcError) as e:
            call(req)
        assert e.value.code() == grpc.StatusCode.NOT_FOUND


# ---------------------------------------------------------------------------------- errors

def f32(*values):
    return np.array(values, "<f4").tobytes()


def two_inputs():
    r = request("FP32", [1, 3], f32(1, 2, 3))
    r.inputs.add(name="other", datatype="FP32", shape=[1, 3])
    return r


def two_raws():
    r = request("FP32", [1, 3], f32(1, 2, 3))
    r.raw_input_contents.append(f32(1, 2, 3))
    return r


def unknown_output():
    r = request("FP32", [1, 3], f32(1, 2, 3))
    r.outputs.add(name="probabilities")
    return r


BAD_FLOAT_REQUESTS = [
    (grpc.StatusCode.NOT_FOUND, "unknown model 'x'", lambda: request("FP32", [1, 3], f32(1, 2, 3), model="x")),
    (grpc.StatusCode.NOT_FOUND, "unknown version '2'", lambda: request("FP32", [1, 3], f32(1, 2, 3), version="2")),
    (grpc.StatusCode.INVALID_ARGUMENT, "datatype FP64", lambda: request("FP64", [1, 3], np.zeros(3, "<f8").tobytes())),
    (grpc.StatusCode.INVALID_ARGUMENT, "must be [N] or [N, d]", lambda: request("FP32", [1, 1, 3], f32(1, 2, 3))),
    (grpc.StatusCode.INVALID_ARGUMENT, "must be [N] or [N, d]", lambda: request("FP32", [], f32(1, 2, 3))),
    (grpc.StatusCode.INVALID_ARGUMENT, "raw contents hold 8 bytes but shape [1, 3] of FP32 needs 12", lambda: request("FP32", [1, 3], f32(1, 2))),
    (grpc.StatusCode.INVALID_ARGUMENT, "contents hold 2 elements",
     lambda: request("FP32", [1, 3], contents=pb.InferTensorContents(fp32_contents=[1, 2]))),
    (grpc.StatusCode.INVALID_ARGUMENT, "empty batch", lambda: request("FP32", [0, 3], b"")),
    (grpc.StatusCode.INVALID_ARGUMENT, "invalid batch dimension -1", lambda: request("FP32", [-1, 3], f32(1, 2, 3))),
    (grpc.StatusCode.INVALID_ARGUMENT, "invalid vector dimension 0", lambda: request("FP32", [1, 0], b"")),
    (grpc.StatusCode.INVALID_ARGUMENT, "vectors of length 4; the model expects 3",
     lambda: request("FP32", [1, 4], f32(1, 2, 3, 4))),
    (grpc.StatusCode.INVALID_ARGUMENT, "exactly 1 input tensor, the request has 2", two_inputs),
    (grpc.StatusCode.INVALID_ARGUMENT, "exactly 1 input tensor, the request has 0",
     lambda: pb.ModelInferRequest(model_name="m")),
    (grpc.StatusCode.INVALID_ARGUMENT, "raw_input_contents has 2 entries", two_raws),
    (grpc.StatusCode.INVALID_ARGUMENT, "has no output 'probabilities'", unknown_output),
]


@pytest.mark.parametrize("code,message,make", BAD_FLOAT_REQUESTS,
                         ids=[m for _, m, _ in BAD_FLOAT_REQUESTS])
def test_bad_numeric_request_is_refused_and_the_next_one_succeeds(server_factory, code, message, make):
    calls = []
    s = server_factory(lambda b: calls.append(len(b)) or echo_rows(b), input_type="floats", input_length=3)
    with pytest.raises(grpc.RpcError) as e:
        s.stub.ModelInfer(make())
    assert e.value.code() == code
    assert message in e.value.details()
    assert calls == [], "the predictor never sees a bad request"
    floats_ok(s)


BAD_BYTES_REQUESTS = [
    ("datatype FP32", lambda: request("FP32", [1], f32(1))),
    ("BYTES input shape [2, 2] must be [N] or [N, 1]", lambda: request("BYTES", [2, 2], bytes_raw([b"a"] * 2))),
    ("declares length 100 but only 1 bytes remain", lambda: request("BYTES", [1], struct.pack("<I", 100) + b"a")),
    ("raw BYTES contents end before element 1 of 2", lambda: request("BYTES", [2], bytes_raw([b"a"]))),
    ("hold 3 bytes beyond the 1 elements", lambda: request("BYTES", [1], bytes_raw([b"a"]) + b"xyz")),
    ("contents hold 1 elements but shape [2] needs 2",
     lambda: request("BYTES", [2], contents=pb.InferTensorContents(bytes_contents=[b"a"]))),
    ("empty batch", lambda: request("BYTES", [0], b"")),
]


@pytest.mark.parametrize("message,make", BAD_BYTES_REQUESTS, ids=[m for m, _ in BAD_BYTES_REQUESTS])
def test_bad_bytes_request_is_refused_and_the_next_one_succeeds(server_factory, message, make):
    s = server_factory(lambda b: [x.upper() for x in b], input_type="strings")
    with pytest.raises(grpc.RpcError) as e:
        s.stub.ModelInfer(make())
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in e.value.details()
    resp = s.stub.ModelInfer(request("BYTES", [2], bytes_raw([b"ab", b"c"])))
    assert parse_bytes(resp.raw_output_contents[0]) == [b"AB", b"C"]


class Flaky:
    """Fails in the way given for the first batch, then answers."""

    def __init__(self, failure):
        self.failure = failure
        self.calls = 0

    def __call__(self, batch):
        self.calls += 1
        if self.calls == 1:
            return self.failure(batch)
        return echo_rows(batch)


def _raise(batch):
    raise RuntimeError("model exploded")


@pytest.mark.parametrize("failure,message", [
    (_raise, "predictor of model 'm' failed: RuntimeError('model exploded')"),
    (lambda b: ["one"] * (len(b) + 1), "returned 2 outputs for a batch of 1; it must return exactly one output per input"),
    (lambda b: None, "returned None for a batch of 1"),
    (lambda b: 42, "returned int for a batch of 1"),
    (lambda b: [object()], "cannot be encoded as BYTES"),
], ids=["exception", "wrong-count", "none", "not-a-sequence", "unencodable"])
def test_predictor_failure_is_internal_and_the_container_keeps_serving(server_factory, failure, message):
    # isolated, a batch of one that raises answers with a row error instead: test_rows.py
    s = server_factory(Flaky(failure), input_type="floats", isolate_rows=False)
    with pytest.raises(grpc.RpcError) as e:
        s.stub.ModelInfer(request("FP32", [1, 3], f32(1, 2, 3)))
    assert e.value.code() == grpc.StatusCode.INTERNAL
    assert message in e.value.details()
    floats_ok(s)


def test_numeric_outputs_of_unequal_length_are_internal(server_factory):
    s = server_factory(Flaky(lambda b: [[1.0], [1.0, 2.0]]), input_type="floats", output_type="floats")
    with pytest.raises(grpc.RpcError) as e:
        s.stub.ModelInfer(request("FP32", [2, 1], f32(1, 2)))
    assert e.value.code() == grpc.StatusCode.INTERNAL
    assert "equal length: got 2 and 1" in e.value.details()


def test_oversize_message_is_resource_exhausted_and_the_next_one_succeeds(server_factory):
    s = server_factory(echo_rows, input_type="floats", max_message_bytes=64 * 1024)
    big = np.zeros((100, 784), "<f4")  # 313,600 bytes
    with pytest.raises(grpc.RpcError) as e:
        s.stub.ModelInfer(request("FP32", [100, 784], big.tobytes()))
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    floats_ok(s)


def test_full_queue_is_resource_exhausted(server_factory):
    release = threading.Event()
    entered = threading.Semaphore(0)

    def blocking(batch):
        entered.release()
        release.wait(10)
        return echo_rows(batch)

    s = server_factory(blocking, input_type="floats", max_queued_batches=1)
    running = s.stub.ModelInfer.future(request("FP32", [1, 3], f32(1, 2, 3)))
    assert entered.acquire(timeout=10)
    queued = s.stub.ModelInfer.future(request("FP32", [1, 3], f32(4, 5, 6)))
    deadline = time.monotonic() + 10
    while s.container._pending < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(grpc.RpcError) as e:
        s.stub.ModelInfer(request("FP32", [1, 3], f32(7, 8, 9)))
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    release.set()
    assert parse_bytes(running.result(10).raw_output_contents[0]) == [b"1.0,2.0,3.0"]
    assert parse_bytes(queued.result(10).raw_output_contents[0]) == [b"4.0,5.0,6.0"]
    floats_ok(s)


def test_one_batch_at_a_time_by_default(server_factory):
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def predict(batch):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.02)
        with lock:
            state["now"] -= 1
        return echo_rows(batch)

    s = server_factory(predict, input_type="floats")
    futures = [s.stub.ModelInfer.future(request("FP32", [1, 1], f32(i))) for i in range(12)]
    assert [parse_bytes(f.result(20).raw_output_contents[0]) for f in futures] == [
        [("%.1f" % i).encode()] for i in range(12)]
    assert state["max"] == 1


def test_configuration_is_validated():
    with pytest.raises(ValueError, match="a model name is required"):
        servegate.ModelContainer(echo_rows, name="")
    with pytest.raises(ValueError, match="unknown input type 'matrix'"):
        servegate.ModelContainer(echo_rows, name="m", input_type="matrix")
    with pytest.raises(ValueError, match="concurrency must be positive"):
        servegate.ModelContainer(echo_rows, name="m", concurrency=0)
    with pytest.raises(ValueError, match="port must be in 0..65535"):
        servegate.ModelContainer(echo_rows, name="m", port=70000)


def test_a_port_in_use_fails_to_start(server_factory):
    s = server_factory(echo_rows)
    with pytest.raises(Exception):
        servegate.ModelContainer(echo_rows, name="m", host="127.0.0.1", port=s.container.port).start()


# ---------------------------------------------------------------------------------- process + drain

def start_process(env_extra):
    env = dict(os.environ, HOST="127.0.0.1", PORT="0", MODEL_NAME="slow", MODEL_VERSION="7", **env_extra)
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "slow_model.py")], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("READY port="), line + p.stderr.read()
    return p, int(line.split("=")[1])


def wait_for_batch(p):
    for line in p.stderr:
        if line.startswith("BATCH"):
            return
    raise AssertionError("the container exited before the batch reached the predictor")


@pytest.mark.parametrize("drain_seconds,drains", [("30", True), ("0", False)])
def test_sigterm_mid_batch_drains_the_batch_and_exits_zero(drain_seconds, drains):
    p, port = start_process({"SLOW_SECONDS": "1.5", "DRAIN_SECONDS": drain_seconds})
    try:
        with grpc.insecure_channel("127.0.0.1:%d" % port) as channel:
            stub = GRPCInferenceServiceStub(channel)
            meta = stub.ModelMetadata(pb.ModelMetadataRequest(name="slow"))
            assert list(meta.versions) == ["7"]
            in_flight = stub.ModelInfer.future(request("BYTES", [1], bytes_raw([b"x"]), model="slow"), timeout=20)
            wait_for_batch(p)
            p.send_signal(signal.SIGTERM)
            time.sleep(0.3)
            with pytest.raises(grpc.RpcError) as refused:  # no new calls while draining
                stub.ModelInfer(request("BYTES", [1], bytes_raw([b"y"]), model="slow"), timeout=5)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
            if drains:
                assert parse_bytes(in_flight.result().raw_output_contents[0]) == [b"slow:x"]
            else:  # the control: without a drain the in-flight batch is lost, so the test above detects one
                with pytest.raises(grpc.RpcError):
                    in_flight.result()
        assert p.wait(20) == 0
    finally:
        p.kill()
        p.wait()


# ---------------------------------------------------------------------------------- grpc.health.v1

def test_health_is_serving_while_ready_and_not_serving_from_the_start_of_draining():
    from servegate.oip import HealthStub, health_pb

    release = threading.Event()
    entered = threading.Event()

    def blocking(batch):
        entered.set()
        release.wait(10)
        return echo_rows(batch)

    container = servegate.ModelContainer(blocking, name="m", host="127.0.0.1", port=0).start()
    channel = grpc.insecure_channel("127.0.0.1:%d" % container.port)
    try:
        health = HealthStub(channel)
        serving = health_pb.HealthCheckResponse.SERVING
        for service in ("", "inference.GRPCInferenceService"):
            assert health.Check(health_pb.HealthCheckRequest(service=service), timeout=5).status == serving
        with pytest.raises(grpc.RpcError) as e:
            health.Check(health_pb.HealthCheckRequest(service="no.such.Service"), timeout=5)
        assert e.value.code() == grpc.StatusCode.NOT_FOUND
        watch = health.Watch(health_pb.HealthCheckRequest(service=""), timeout=20)
        assert next(watch).status == serving
        in_flight = GRPCInferenceServiceStub(channel).ModelInfer.future(
            request("FP32", [1, 1], f32(1)), timeout=20)
        assert entered.wait(10)
        closer = threading.Thread(target=container.close)
        closer.start()
        assert next(watch).status == health_pb.HealthCheckResponse.NOT_SERVING
        assert not in_flight.done(), "NOT_SERVING comes at the start of draining, before the batch ends"
        release.set()
        assert parse_bytes(in_flight.result().raw_output_contents[0]) == [b"1.0"]
        assert list(watch) == [], "the stream ends so that it does not hold up the drain"
        closer.join(10)
        assert not closer.is_alive()
    finally:
        release.set()
        channel.close()
        container.close()


def test_a_batch_outliving_the_drain_timeout_does_not_keep_the_process_alive():
    p, port = start_process({"SLOW_SECONDS": "60", "DRAIN_SECONDS": "1"})
    try:
        with grpc.insecure_channel("127.0.0.1:%d" % port) as channel:
            stub = GRPCInferenceServiceStub(channel)
            in_flight = stub.ModelInfer.future(request("BYTES", [1], bytes_raw([b"x"]), model="slow"), timeout=30)
            wait_for_batch(p)
            p.send_signal(signal.SIGTERM)
            assert p.wait(20) == 0
            with pytest.raises(grpc.RpcError):
                in_flight.result()
    finally:
        p.kill()
        p.wait()

"""Warm-up before ready: every batch size up to the declared max batch (or those given) runs before
ServerReady, ModelReady and health say yes; calls meanwhile get UNAVAILABLE; the times are logged
and reported in ModelMetadata; a model failing its warm-up never becomes ready."""

import logging
import os
import subprocess
import sys
import threading

import grpc
import numpy as np
import pytest

import servegate
from oip_testing import bytes_raw, echo_rows, request
from servegate.oip import GRPCInferenceServiceStub, HealthStub, health_pb, pb

HERE = os.path.dirname(os.path.abspath(__file__))


def test_every_size_up_to_the_max_batch_runs_twice_before_ready(server_factory, caplog):
    sizes = []

    def predict(batch):
        sizes.append(batch.shape)
        return echo_rows(batch)

    with caplog.at_level(logging.INFO, logger="servegate"):
        s = server_factory(predict, input_type="floats", input_length=3, max_batch_size=3, warmup_batch_sizes=None)
    assert sizes == [(1, 3), (1, 3), (2, 3), (2, 3), (3, 3), (3, 3)]
    line = next(r.getMessage() for r in caplog.records if "warmed up" in r.getMessage())
    assert "model 'm' warmed up in" in line and "batch 3:" in line and "then" in line
    params = s.stub.ModelMetadata(pb.ModelMetadataRequest(name="m")).parameters
    assert params["servegate_warmup_batch_sizes"].string_param == "1,2,3"
    assert len(params["servegate_warmup_last_ns"].string_param.split(",")) == 3
    assert params["servegate_max_batch_size"].int64_param == 3
    assert s.stub.ServerReady(pb.ServerReadyRequest()).ready


def test_the_container_is_live_but_not_ready_while_it_warms_up():
    release, entered = threading.Event(), threading.Event()

    def predict(batch):
        entered.set()
        release.wait(20)
        return echo_rows(batch)

    container = servegate.ModelContainer(predict, name="m", host="127.0.0.1", port=0, input_type="floats",
                                         input_length=1, warmup_batch_sizes=[1], warmup_runs=1)
    starter = threading.Thread(target=container.start)
    starter.start()
    try:
        assert entered.wait(20)
        with grpc.insecure_channel("127.0.0.1:%d" % container.port) as channel:
            stub = GRPCInferenceServiceStub(channel)
            assert stub.ServerLive(pb.ServerLiveRequest()).live
            assert not stub.ServerReady(pb.ServerReadyRequest()).ready
            assert not stub.ModelReady(pb.ModelReadyRequest(name="m")).ready
            health = HealthStub(channel).Check(health_pb.HealthCheckRequest(service=""))
            assert health.status == health_pb.HealthCheckResponse.NOT_SERVING
            with pytest.raises(grpc.RpcError) as e:
                stub.ModelInfer(request("FP32", [1, 1], np.ones(1, "<f4").tobytes()))
            assert e.value.code() == grpc.StatusCode.UNAVAILABLE and "warming up" in e.value.details()
            release.set()
            starter.join(20)
            assert stub.ServerReady(pb.ServerReadyRequest()).ready
            assert stub.ModelInfer(request("FP32", [1, 1], np.ones(1, "<f4").tobytes())).outputs[0].shape == [1]
    finally:
        release.set()
        starter.join(20)
        container.close()


def test_a_model_failing_its_warm_up_never_becomes_ready():
    def predict(batch):
        if len(batch) == 2:
            raise MemoryError("out of device memory")
        return echo_rows(batch)

    container = servegate.ModelContainer(predict, name="m", host="127.0.0.1", port=0, input_type="floats",
                                         input_length=2, max_batch_size=2)
    with pytest.raises(RuntimeError, match="warm-up of model 'm' failed: predictor of model 'm' failed: "
                                           "MemoryError"):
        container.start()
    assert not container.ready


def test_warm_up_off_and_inputs_that_cannot_be_made_up(server_factory, caplog):
    calls = []
    s = server_factory(lambda b: calls.append(list(b)) or list(b), input_type="strings", warmup_batch_sizes=[])
    assert calls == [] and "servegate_warmup_batch_sizes" not in \
        s.stub.ModelMetadata(pb.ModelMetadataRequest(name="m")).parameters
    with caplog.at_level(logging.WARNING, logger="servegate"):
        server_factory(lambda b: calls.append(list(b)) or list(b), input_type="strings", warmup_batch_sizes=None)
    assert calls == [] and "is not warmed up" in caplog.text
    server_factory(lambda b: calls.append(list(b)) or list(b), input_type="strings", warmup_batch_sizes=[2],
                   warmup_runs=1, warmup_input="héllo")
    assert calls == [["héllo", "héllo"]]


def test_warm_up_options_are_checked():
    with pytest.raises(ValueError, match="warm-up batch size 8 exceeds max_batch_size 4"):
        servegate.ModelContainer(echo_rows, name="m", max_batch_size=4, warmup_batch_sizes=[1, 8])
    with pytest.raises(ValueError, match="the warm-up input has 2 values; the model expects 3"):
        servegate.ModelContainer(echo_rows, name="m", input_length=3, warmup_input=[1, 2])
    with pytest.raises(ValueError, match="comma-separated integers or 'none'"):
        from servegate.warmup import parse_batch_sizes
        parse_batch_sizes("1,two")


def test_serve_takes_the_warm_up_from_the_environment(tmp_path):
    sample = tmp_path / "sample.txt"
    sample.write_bytes(b"warm")
    env = dict(os.environ, HOST="127.0.0.1", PORT="0", MODEL_NAME="slow", SLOW_SECONDS="0", MAX_BATCH_SIZE="3",
               WARMUP_BATCH_SIZES="3,1", WARMUP_RUNS="1", WARMUP_INPUT_FILE=str(sample))
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "slow_model.py")], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        ready = p.stdout.readline()
        assert ready.startswith("READY port="), p.stderr.read()
        with grpc.insecure_channel("127.0.0.1:" + ready.strip().split("=")[1]) as channel:
            stub = GRPCInferenceServiceStub(channel)
            with pytest.raises(grpc.RpcError) as e:
                stub.ModelInfer(request("BYTES", [4], bytes_raw([b"x"] * 4), model="slow"))
            assert "exceeds the max_batch_size 3" in e.value.details()
        p.terminate()
        assert p.wait(20) == 0
        err = p.stderr.read()
        assert err.index("BATCH 1") < err.index("BATCH 3") < err.index("warmed up")
    finally:
        p.kill()
        p.wait()

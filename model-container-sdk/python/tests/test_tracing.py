"""The gateway's traceparent, read from a real call's metadata: a failed call's log line names its
trace id, so that the query can be followed from the gateway's trace into the container's log."""

import logging

import grpc
import numpy as np
import pytest

from oip_testing import echo_rows, parse_bytes, request
from servegate import tracing

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = "00-%s-00f067aa0ba902b7-01" % TRACE


def test_a_failed_call_logs_its_trace_id_and_a_good_one_answers(server_factory, caplog):
    s = server_factory(lambda batch: [], input_type="floats")  # a broken predictor: no outputs
    raw = np.array([1, 2, 3], "<f4").tobytes()
    with caplog.at_level(logging.DEBUG, logger="servegate"):
        with pytest.raises(grpc.RpcError) as e:
            s.stub.ModelInfer(request("FP32", [1, 3], raw), metadata=(("traceparent", TRACEPARENT),))
    assert e.value.code() == grpc.StatusCode.INTERNAL
    failed = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("ModelInfer failed trace_id=" + TRACE in m and "INTERNAL" in m for m in failed), failed
    assert any("ModelInfer trace_id=" + TRACE in r.getMessage() for r in caplog.records
               if r.levelno == logging.DEBUG)

    ok = server_factory(echo_rows, input_type="floats")
    resp = ok.stub.ModelInfer(request("FP32", [1, 3], raw), metadata=(("traceparent", TRACEPARENT),))
    assert parse_bytes(resp.raw_output_contents[0]) == [b"1.0,2.0,3.0"]


def test_only_a_well_formed_traceparent_is_read():
    assert tracing.trace_id({"traceparent": TRACEPARENT}) == TRACE
    assert tracing.trace_id({}) is None
    assert tracing.trace_id({"traceparent": TRACEPARENT[:-3]}) is None
    assert tracing.trace_id({"traceparent": TRACEPARENT.upper()}) is None
    assert tracing.trace_id({"traceparent": TRACEPARENT + "\nforged"}) is None

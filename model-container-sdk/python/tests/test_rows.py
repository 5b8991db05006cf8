"""Row isolation: a batch the predictor raises on answers with per-row errors (servegate_row_errors)."""

import struct

import grpc
import numpy as np
import pytest

import servegate
from oip_testing import bytes_raw, parse_bytes, request


def f32(rows):
    return np.asarray(rows, dtype="<f4").tobytes()


class Sums:
    """Sums each row, as float; raises on the whole batch when any row holds a negative value."""

    def __init__(self, error=servegate.InvalidInput):
        self.calls = 0
        self.error = error

    def __call__(self, batch):
        self.calls += 1
        for row in batch:
            if (row < 0).any():
                raise self.error("negative value %g" % row.min())
        return batch.sum(axis=1)


def row_errors(resp):
    names = [o.name for o in resp.outputs]
    if servegate.ROW_ERRORS not in names:
        return None
    i = names.index(servegate.ROW_ERRORS)
    assert resp.outputs[i].datatype == "BYTES"
    assert list(resp.outputs[i].shape) == [resp.outputs[0].shape[0]]  # one element per row
    return [e.decode("utf-8") for e in parse_bytes(resp.raw_output_contents[i])]


def test_good_rows_keep_their_outputs_and_bad_rows_get_their_own_errors(server_factory):
    model = Sums()
    s = server_factory(model, input_type="floats", output_type="floats")
    rows = [[1, 1], [2, 1], [-3, 1], [4, 1], [5, 1], [6, 1], [-7, 1], [8, 1]]
    resp = s.stub.ModelInfer(request("FP32", [8, 2], f32(rows)))
    sums = np.frombuffer(resp.raw_output_contents[0], dtype="<f4")
    errors = row_errors(resp)
    assert errors == ["", "", "negative value -3", "", "", "", "negative value -7", ""]
    for i in (0, 1, 3, 4, 5, 7):
        assert sums[i] == rows[i][0] + 1
    assert sums[2] == 0 and sums[6] == 0  # placeholders
    assert model.calls == 11  # 1 + 2 halves + 4 quarters + 4 single rows: bisection, not a call per row


def test_a_batch_with_no_bad_row_carries_no_row_errors(server_factory):
    model = Sums()
    s = server_factory(model, input_type="floats", output_type="floats")
    resp = s.stub.ModelInfer(request("FP32", [2, 2], f32([[1, 2], [3, 4]])))
    assert row_errors(resp) is None
    assert model.calls == 1


def test_a_single_bad_row_is_a_row_error_not_a_failed_call(server_factory):
    s = server_factory(Sums(ValueError), input_type="floats")
    resp = s.stub.ModelInfer(request("FP32", [1, 2], f32([[-1, 2]])))
    assert row_errors(resp) == ["ValueError('negative value -1')"]
    assert parse_bytes(resp.raw_output_contents[0]) == [b""]


def test_a_predictor_that_fails_every_row_fails_the_call(server_factory):
    def broken(batch):
        raise RuntimeError("weights not loaded")

    s = server_factory(broken, input_type="floats")
    with pytest.raises(grpc.RpcError) as e:
        s.stub.ModelInfer(request("FP32", [3, 1], f32([[1], [2], [3]])))
    assert e.value.code() == grpc.StatusCode.INTERNAL
    assert "weights not loaded" in e.value.details()


def test_every_row_invalid_is_reported_row_by_row(server_factory):
    s = server_factory(Sums(), input_type="floats")
    resp = s.stub.ModelInfer(request("FP32", [2, 1], f32([[-1], [-2]])))
    assert row_errors(resp) == ["negative value -1", "negative value -2"]


def test_without_isolation_the_batch_fails_as_invalid_argument(server_factory):
    model = Sums()
    s = server_factory(model, input_type="floats", isolate_rows=False)
    with pytest.raises(grpc.RpcError) as e:
        s.stub.ModelInfer(request("FP32", [3, 1], f32([[1], [-2], [3]])))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "negative value -2" in e.value.details()
    assert model.calls == 1


def test_bytes_sub_batches_keep_their_array_view(server_factory):
    seen = []

    def first_bytes(batch):
        seen.append(len(batch))
        arr = batch.array()  # a split batch is still a BytesBatch
        if (arr == ord("!")).any():
            raise servegate.InvalidInput("corrupt image")
        return [str(int(r[0])) for r in arr]

    s = server_factory(first_bytes, input_type="bytes")
    resp = s.stub.ModelInfer(request("BYTES", [3], bytes_raw([b"AB", b"C!", b"DE"])))
    assert parse_bytes(resp.raw_output_contents[0]) == [b"65", b"", b"68"]
    assert row_errors(resp) == ["", "corrupt image", ""]
    assert struct.unpack("<I", resp.raw_output_contents[1][:4])[0] == 0

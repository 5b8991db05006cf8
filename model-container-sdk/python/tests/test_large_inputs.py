"""Batches of large and fixed-size inputs: bytes arrive as a BytesBatch viewing the request (one
BYTES tensor of length-prefixed elements, or one UINT8 tensor [N, ...] holding the whole batch),
the declared size and max batch are enforced, outputs of numpy arrays are encoded in one step,
and the wire format is read without protobuf's copies."""

import grpc
import numpy as np
import pytest

from servegate import wire
from servegate.oip import pb
from servegate.tensor import BytesBatch
from oip_testing import bytes_raw, parse_bytes, request

IMAGE = 3 * 224 * 224


def images(n, length=IMAGE, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (n, length), dtype=np.uint8)


class Recorder:
    def __init__(self):
        self.batches = []

    def __call__(self, batch):
        self.batches.append(batch)
        return [str(sum(x[:64])) for x in batch]


@pytest.mark.parametrize("form", ["bytes", "uint8"])
def test_a_batch_of_32_images_arrives_as_one_view_in_either_form(server_factory, form):
    seen = Recorder()
    s = server_factory(seen, input_type="bytes", input_length=IMAGE, max_batch_size=32)
    x = images(32)
    if form == "bytes":
        r = request("BYTES", [32], bytes_raw([row.tobytes() for row in x]))
    else:
        r = request("UINT8", [32, 3, 224, 224], x.tobytes())
    resp = s.stub.ModelInfer(r)
    assert parse_bytes(resp.raw_output_contents[0]) == [str(int(row[:64].sum())).encode() for row in x]
    (batch,) = seen.batches
    assert isinstance(batch, BytesBatch) and len(batch) == 32 and batch.element_length == IMAGE
    assert batch[5] == x[5].tobytes()
    view = batch.array()
    assert view.shape == (32, IMAGE) and view.dtype == np.uint8
    np.testing.assert_array_equal(view, x)
    assert not view.flags.owndata and not view.flags.writeable, "a view of the request, not a copy"
    assert s.container.max_message_bytes > 32 * IMAGE  # room for a full batch, beyond the 16 MiB default


def test_uint8_typed_contents_and_strings_models_take_fixed_size_batches(server_factory):
    seen = Recorder()
    s = server_factory(seen, input_type="bytes")
    resp = s.stub.ModelInfer(request("UINT8", [2, 3], contents=pb.InferTensorContents(uint_contents=[1, 2, 3, 4, 5, 6])))
    assert parse_bytes(resp.raw_output_contents[0]) == [b"6", b"15"]
    np.testing.assert_array_equal(seen.batches[0].array(), [[1, 2, 3], [4, 5, 6]])
    with pytest.raises(grpc.RpcError) as e:
        s.stub.ModelInfer(request("UINT8", [1, 2], contents=pb.InferTensorContents(uint_contents=[1, 256])))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "beyond 255" in e.value.details()
    text = server_factory(lambda b: [t.upper() for t in b], input_type="strings")
    resp = text.stub.ModelInfer(request("UINT8", [2, 2], b"abcd"))
    assert parse_bytes(resp.raw_output_contents[0]) == [b"AB", b"CD"]


BAD = [
    ("raw contents hold 5 bytes but shape [2, 3] of UINT8 needs 6", lambda: request("UINT8", [2, 3], b"abcde")),
    ("UINT8 input shape [] has no batch dimension", lambda: request("UINT8", [], b"")),
    ("has an element of 2 bytes; the model expects 3", lambda: request("BYTES", [2], bytes_raw([b"abc", b"de"]))),
    ("has an element of 4 bytes; the model expects 3", lambda: request("UINT8", [1, 4], b"abcd")),
    ("a batch of 5 exceeds the max_batch_size 4 of model 'm'", lambda: request("UINT8", [5, 3], bytes(15))),
    ("has both contents and raw_input_contents",
     lambda: request("UINT8", [1, 3], b"abc", contents=pb.InferTensorContents(uint_contents=[1, 2, 3]))),
]


@pytest.mark.parametrize("message,make", BAD, ids=[m for m, _ in BAD])
def test_bad_fixed_size_batches_are_refused_and_the_next_answered(server_factory, message, make):
    seen = Recorder()
    s = server_factory(seen, input_type="bytes", input_length=3, max_batch_size=4)
    with pytest.raises(grpc.RpcError) as e:
        s.stub.ModelInfer(make())
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in e.value.details()
    assert seen.batches == []
    assert len(s.stub.ModelInfer(request("UINT8", [4, 3], bytes(12))).outputs) == 1


def test_malformed_request_bytes_are_invalid_argument(server_factory):
    s = server_factory(Recorder(), input_type="bytes")
    call = s.channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")
    for garbage in (b"\x3a\xff\xff\xff\xff\x0f", b"\x0a\x05ab", b"\x0b"):
        with pytest.raises(grpc.RpcError) as e:
            call(garbage)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "malformed ModelInferRequest" in e.value.details()


def test_error_texts_do_not_echo_a_huge_name(server_factory):
    s = server_factory(Recorder(), input_type="bytes")
    with pytest.raises(grpc.RpcError) as e:
        s.stub.ModelInfer(request("BYTES", [1], bytes_raw([b"x"]), model="n" * 100_000))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    assert len(e.value.details()) < 400 and "(100000 characters)" in e.value.details()


@pytest.mark.parametrize("outputs,shape", [
    (lambda b: b.sum(axis=1), [2, 1]), (lambda b: b * 2, [2, 2]), (lambda b: (b > 1).any(axis=1), [2, 1])])
def test_numpy_outputs_are_encoded_in_one_step(server_factory, outputs, shape):
    s = server_factory(outputs, input_type="floats", output_type="doubles")
    x = np.array([[1, 2], [3, 4]], "<f4")
    resp = s.stub.ModelInfer(request("FP32", [2, 2], x.tobytes()))
    assert list(resp.outputs[0].shape) == shape
    np.testing.assert_array_equal(np.frombuffer(resp.raw_output_contents[0], "<f8").reshape(shape),
                                  np.asarray(outputs(x), np.float64).reshape(shape))


def test_the_raw_contents_are_cut_out_of_the_message_where_they_lie():
    r = pb.ModelInferRequest(model_name="m", id="7")
    r.parameters["p"].int64_param = 300
    r.inputs.add(name="input", datatype="BYTES", shape=[1])
    r.raw_input_contents.extend([b"first" * 100, b"second"])
    data = r.SerializeToString()
    rest, raws = wire.split_bytes_field(data, wire.RAW_INPUT_CONTENTS_FIELD)
    assert [bytes(v) for v in raws] == [b"first" * 100, b"second"]
    assert all(v.obj is data for v in raws), "views of the received bytes"
    parsed = pb.ModelInferRequest.FromString(rest)
    del r.raw_input_contents[:]
    assert parsed == r
    plain = pb.ModelInferRequest(model_name="m").SerializeToString()
    assert wire.split_bytes_field(plain, 7) == (plain, [])
    with pytest.raises(wire.WireFormatError, match="field 7 declares 500 bytes but 10 remain"):
        wire.split_bytes_field(b"\x3a\xf4\x03" + b"x" * 10, 7)
    response = pb.ModelInferResponse(model_name="m")
    joined = wire.append_bytes_field(response.SerializeToString(), wire.RAW_OUTPUT_CONTENTS_FIELD, [b"a" * 200, b""])
    assert list(pb.ModelInferResponse.FromString(joined).raw_output_contents) == [b"a" * 200, b""]

"""Helpers of the SDK's tests: a container in this process with a stub to call it, and the OIP
encodings the tests build requests from and read answers with."""

import struct

import grpc

import servegate
from servegate.oip import GRPCInferenceServiceStub, pb


class Server:
    """A container in this process on a free loopback port, with a stub to call it."""

    def __init__(self, predict_batch, **kw):
        kw.setdefault("name", "m")
        kw.setdefault("version", "1")
        kw.setdefault("warmup_batch_sizes", [])  # the warm-up has its own tests; here the predictor sees requests only
        self.container = servegate.ModelContainer(predict_batch, host="127.0.0.1", port=0, **kw).start()
        self.channel = grpc.insecure_channel("127.0.0.1:%d" % self.container.port,
                                             options=[("grpc.max_send_message_length", 64 << 20)])
        self.stub = GRPCInferenceServiceStub(self.channel)

    def close(self):
        self.channel.close()
        self.container.close()


def request(datatype, shape, raw=None, model="m", version="", contents=None, name="input"):
    r = pb.ModelInferRequest(model_name=model, model_version=version, id="req-1")
    t = r.inputs.add(name=name, datatype=datatype, shape=shape)
    if contents is not None:
        t.contents.CopyFrom(contents)
    if raw is not None:
        r.raw_input_contents.append(raw)
    return r


def bytes_raw(elements):
    return b"".join(struct.pack("<I", len(e)) + e for e in elements)


def parse_bytes(raw):
    out, pos = [], 0
    while pos < len(raw):
        (n,) = struct.unpack_from("<I", raw, pos)
        out.append(raw[pos + 4:pos + 4 + n])
        pos += 4 + n
    return out


def echo_rows(batch):
    return [",".join(str(v) for v in row.tolist()) for row in batch]



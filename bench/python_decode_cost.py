#!/usr/bin/python3
"""CPU time of the SDK's own part of a ModelInfer call, in process: parse the serialized request,
decode the batch, hand it to a predictor that touches every input, encode the outputs and
serialize the response. Run with SDK_DIR=<a checkout> to measure that checkout's SDK; prints the
median microseconds per call for each batch size (inputs of INPUT_BYTES bytes, a BYTES tensor).
bench/python-sdk-direct.py runs it for both SDKs it compares."""

import os
import statistics
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get("SDK_DIR") or os.path.join(HERE, ".."), "model-container-sdk", "python"))

import servegate  # noqa: E402
from servegate import container as sdk  # noqa: E402

pb = getattr(sdk, "pb")


def touch(batch):
    return [str(x[0]) for x in batch]  # reads each input, as any model must


def main():
    length = int(os.environ.get("INPUT_BYTES", "150528"))
    c = servegate.ModelContainer(touch, name="noop", input_type="bytes", max_message_bytes=64 << 20)
    split = hasattr(c, "parse")  # this SDK: parse(bytes) -> (request, raw views); older: protobuf parses all
    for n in [int(b) for b in sys.argv[1].split(",")]:
        r = pb.ModelInferRequest(model_name="noop")
        r.inputs.add(name="input", datatype="BYTES", shape=[n])
        r.raw_input_contents.append((struct.pack("<I", length) + bytes(range(256)) * (length // 256)
                                     + bytes(length % 256)) * n)
        data = r.SerializeToString()
        times = []
        for _ in range(200):
            start = time.thread_time_ns()
            if split:
                request, raws = c.parse(data)
                batch = c.decode(request, raws)
                shape, raw, _ = c.predict(batch)
                sdk.wire.append_bytes_field(pb.ModelInferResponse(model_name="noop").SerializeToString(), 6, [raw])
            else:
                request = pb.ModelInferRequest.FromString(data)
                batch = c.decode(request)
                shape, raw, _ = c.predict(batch)
                response = pb.ModelInferResponse(model_name="noop")
                response.raw_output_contents.append(raw)
                response.SerializeToString()
            times.append(time.thread_time_ns() - start)
        print("%d %.1f" % (n, statistics.median(times) / 1e3), flush=True)


if __name__ == "__main__":
    main()

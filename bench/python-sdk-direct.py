#!/usr/bin/python3
"""Direct gRPC to a no-op Python SDK container: latency of ModelInfer for batches of large inputs,
this checkout's SDK side by side with another checkout's (--baseline), rounds interleaved.

    /usr/bin/python3 bench/python-sdk-direct.py --baseline ../servegate-base [--batch-sizes 1,8,32]
        [--input-bytes 150528] [--calls 200] [--rounds 5] [--profile]

Each SDK serves bench/python_noop_container.py in its own process. One client (this process)
sends pre-serialized requests in a closed loop, so that both servers get identical bytes and the
client's own protobuf work is not measured; each container's CPU time per call (from /proc) is
reported beside the latencies, as it depends less on what else runs on the machine, and so is
the CPU time of the SDK's own part of a call, in process (bench/python_decode_cost.py).
Forms: `bytes`, a BYTES tensor [N] of length-prefixed elements (what the gateway sends today;
every SDK takes it), and `uint8`, one UINT8 tensor [N, L] holding the whole batch (this SDK).
Writes bench/results/python-sdk-direct.json and a table.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import struct
import subprocess
import sys
import time

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "model-container-sdk", "python"))

from servegate.oip import pb  # noqa: E402

METHOD = "/inference.GRPCInferenceService/ModelInfer"


class Target:
    """A no-op container on one SDK checkout, and a channel to it."""

    def __init__(self, label, sdk_dir, forms, profile_out=None):
        self.label, self.forms, self.profile_out = label, forms, profile_out
        env = dict(os.environ, SDK_DIR=sdk_dir, PORT="0")
        if profile_out:
            env["PROFILE_OUT"] = profile_out
        self.process = subprocess.Popen([sys.executable, os.path.join(HERE, "python_noop_container.py")], env=env,
                                        stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("READY port="):
            self.process.kill()
            raise SystemExit("the %s container did not start: %r" % (label, line))
        self.channel = grpc.insecure_channel("127.0.0.1:%s" % line.strip().split("=")[1],
                                             options=[("grpc.max_send_message_length", -1),
                                                      ("grpc.max_receive_message_length", -1)])
        self.call = self.channel.unary_unary(METHOD)  # bytes in, bytes out

    def cpu_seconds(self):
        """User + system CPU time of the container process so far."""
        with open("/proc/%d/stat" % self.process.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self):
        self.channel.close()
        self.process.terminate()
        self.process.wait(60)


def request(form, batch, element):
    r = pb.ModelInferRequest(model_name="noop", id="bench")
    if form == "bytes":
        r.inputs.add(name="input", datatype="BYTES", shape=[batch])
        r.raw_input_contents.append((struct.pack("<I", len(element)) + element) * batch)
    else:
        r.inputs.add(name="input", datatype="UINT8", shape=[batch, len(element)])
        r.raw_input_contents.append(element * batch)
    return r.SerializeToString()


def check(answer, batch):
    response = pb.ModelInferResponse.FromString(answer)
    if list(response.outputs[0].shape) != [batch]:
        raise SystemExit("a batch of %d got outputs of shape %s" % (batch, list(response.outputs[0].shape)))


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def own_cpu_us(sdk_dir, batch_sizes, input_bytes):
    """{batch size: median thread CPU microseconds of the SDK's own part of a call} of one checkout's SDK."""
    out = subprocess.run([sys.executable, os.path.join(HERE, "python_decode_cost.py"), ",".join(map(str, batch_sizes))],
                         env=dict(os.environ, SDK_DIR=sdk_dir, INPUT_BYTES=str(input_bytes)), capture_output=True,
                         text=True, check=True).stdout
    return {int(b): float(us) for b, us in (line.split() for line in out.splitlines())}


def uptime():
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", help="another servegate checkout whose SDK to measure beside this one")
    parser.add_argument("--batch-sizes", default="1,8,32")
    parser.add_argument("--input-bytes", type=int, default=150528, help="bytes per input (3x224x224 uint8)")
    parser.add_argument("--calls", type=int, default=200, help="calls per round, target, form and batch size")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup-calls", type=int, default=20)
    parser.add_argument("--profile", action="store_true", help="profile this SDK's server (bench/results/*.prof.txt)")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = parser.parse_args()
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    element = bytes(range(256)) * (args.input_bytes // 256) + bytes(args.input_bytes % 256)
    os.makedirs(args.out, exist_ok=True)
    load_before = uptime()
    targets = [Target("this", ROOT, ("bytes", "uint8"),
                      os.path.join(args.out, "python-sdk-direct.prof.txt") if args.profile else None)]
    if args.baseline:
        targets.append(Target("baseline", os.path.abspath(args.baseline), ("bytes",)))
    samples, cpu = {}, {}
    try:
        bodies = {(f, b): request(f, b, element) for f in ("bytes", "uint8") for b in batch_sizes}
        for t in targets:
            for f in t.forms:
                for b in batch_sizes:
                    check(t.call(bodies[(f, b)], timeout=60), b)
                    for _ in range(args.warmup_calls):
                        t.call(bodies[(f, b)], timeout=60)
        for _ in range(args.rounds):
            for b in batch_sizes:
                for t in targets:
                    for f in t.forms:
                        body, recorded = bodies[(f, b)], samples.setdefault((t.label, f, b), [])
                        cpu_before = t.cpu_seconds()
                        for _ in range(args.calls):
                            start = time.perf_counter_ns()
                            t.call(body, timeout=60)
                            recorded.append((time.perf_counter_ns() - start) / 1e6)
                        cpu[(t.label, f, b)] = cpu.get((t.label, f, b), 0.0) + t.cpu_seconds() - cpu_before
    finally:
        for t in targets:
            t.close()
    own = {}
    for _ in range(3):  # alternating processes; the median of three per SDK and size
        for t in targets:
            for b, us in own_cpu_us(os.path.abspath(args.baseline) if t.label == "baseline" else ROOT, batch_sizes,
                                    args.input_bytes).items():
                own.setdefault((t.label, b), []).append(us)
    load_after = uptime()
    rows = []
    for (label, form, batch), values in samples.items():
        values.sort()
        rows.append(dict(sdk=label, form=form, batch=batch, calls=len(values), p50_ms=round(percentile(values, 0.5), 3),
                         p99_ms=round(percentile(values, 0.99), 3), mean_ms=round(statistics.fmean(values), 3),
                         server_cpu_ms=round(cpu[(label, form, batch)] / len(values) * 1e3, 3),
                         sdk_own_cpu_us=round(statistics.median(own[(label, batch)]), 1) if form == "bytes" else None))
    rows.sort(key=lambda r: (r["batch"], r["form"], r["sdk"] != "this"))
    report = dict(benchmark="python-sdk-direct", date_utc=datetime.datetime.utcnow().isoformat(timespec="seconds"),
                  machine="%s, %d cores" % (platform.node(), os.cpu_count()), load_before=load_before,
                  load_after=load_after, input_bytes=args.input_bytes, rounds=args.rounds,
                  versions=dict(python=platform.python_version(), grpc=grpc.__version__,
                                protobuf=__import__("google.protobuf").protobuf.__version__),
                  baseline=os.path.abspath(args.baseline) if args.baseline else None, results=rows)
    with open(os.path.join(args.out, "python-sdk-direct.json"), "w") as f:
        json.dump(report, f, indent=2)
    print("load %s -> %s; %d rounds x %d calls, inputs of %d bytes" % (
        " ".join(load_before), " ".join(load_after), args.rounds, args.calls, args.input_bytes))
    print("%-8s %-6s %5s %9s %9s %9s %14s %15s" % ("sdk", "form", "batch", "p50 ms", "p99 ms", "mean ms",
                                                  "server CPU ms", "SDK's own us"))
    for r in rows:
        print("%-8s %-6s %5d %9.2f %9.2f %9.2f %14.2f %15s" % (
            r["sdk"], r["form"], r["batch"], r["p50_ms"], r["p99_ms"], r["mean_ms"], r["server_cpu_ms"],
            "%.1f" % r["sdk_own_cpu_us"] if r["sdk_own_cpu_us"] is not None else "-"))


if __name__ == "__main__":
    main()

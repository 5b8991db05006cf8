#!/usr/bin/python3
"""Large binary inputs through the gateway, each way a client can send them, side by side in one run.

    /usr/bin/python3 bench/data-path.py --gateway-jar JAR [--baseline-jar JAR [--baseline-ways W,...]]
        [--floor-jar loadgen/target/loadgen.jar] [--input-bytes 150528] [--calls 300] [--rounds 2]
        [--clients 8] [--seconds 6] [--warmup-s 10] [--out DIR]

One no-op model container on the Python SDK (bench/python_noop_container.py, a `bytes` model that
answers "0") behind one gateway (a child JVM on loopback, cache off, so every call reaches the
container). Each input is --input-bytes of random bytes (150,528 = a 3x224x224 uint8 image); every
call sends a different one. Ways, measured in interleaved rounds:

  json-base64   POST /{app}/predict, {"input": "<base64>"}          (Clipper's clients)
  octet-stream  POST /{app}/predict, the image as the body            (Content-Type application/octet-stream)
  oip-binary    POST /v2/models/{m}/infer, a JSON header + the image  (the binary tensor data extension)
  grpc-direct   ModelInfer straight to the container, UINT8 [1, L]    (no gateway: the gaps' zero)
  baseline-W    way W through a second gateway, --baseline-jar (another revision), for each of
                --baseline-ways (default json-base64, which every revision takes)
  floor-octet-stream  the image as the body to the cost benchmark's floor server (--floor-jar, the
                load generator's jar): the same HTTP and gRPC stack with one ModelInfer per
                request and nothing else, so what the stack alone costs over direct gRPC

First each way has --warmup-calls calls from one client, then --clients clients for --warmup-s:
the gateway's JIT is still compiling after a few thousand calls, and a one-client loop measured
then measures the compiler sharing the two cores. For each: one client in a closed loop (--calls
calls: p50, p99) and --clients clients in a closed loop for --seconds (throughput, p50, p99);
then the container alone takes a batch of 32 over gRPC (p50). Bodies are built before the clock
starts, so what is timed is the request's way through the gateway and the container, plus this
client's socket calls. Writes data-path.json to --out and prints a table.
"""

import argparse
import base64
import datetime
import http.client
import json
import os
import platform
import random
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "model-container-sdk", "python"))

from servegate.oip import pb  # noqa: E402

METHOD = "/inference.GRPCInferenceService/ModelInfer"
MODEL = "noop"
APP = "noop-app"
HEADER_LENGTH = "Inference-Header-Content-Length"
WAYS = ("json-base64", "octet-stream", "oip-binary", "grpc-direct")
BASELINE = "baseline-"
FLOOR = "floor-octet-stream"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_average():
    with open("/proc/loadavg") as f:
        return [float(v) for v in f.read().split()[:3]]


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


class Inputs:
    """A pool of distinct random inputs in every way's request form, built once."""

    def __init__(self, count, size):
        rng = random.Random(7)
        images = [rng.randbytes(size) for _ in range(count)]
        self.size = size
        self.bodies = {
            "json-base64": [json.dumps({"input": base64.b64encode(i).decode()}).encode() for i in images],
            "octet-stream": images,
            "oip-binary": [self._oip(i) for i in images],
            "grpc-direct": [self._grpc(i, 1) for i in images],
        }
        self.batch32 = self._grpc(b"".join(images[:32]) if count >= 32 else images[0] * 32, 32)

    def _oip(self, image):
        header = json.dumps({"inputs": [{"name": "input", "datatype": "UINT8", "shape": [1, len(image)],
                                         "parameters": {"binary_data_size": len(image)}}]}).encode()
        return len(header), header + image

    def _grpc(self, raw, batch):
        r = pb.ModelInferRequest(model_name=MODEL)
        r.inputs.add(name="input", datatype="UINT8", shape=[batch, self.size])
        r.raw_input_contents.append(raw)
        return r.SerializeToString()


class NoDelayConnection(http.client.HTTPConnection):
    """An HTTP connection with TCP_NODELAY, as requests (urllib3) makes them: http.client writes a
    request's headers and its body in two sends, and without it the body waits for the headers' ACK."""

    def connect(self):
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Client:
    """One connection's worth of calls in one way; call(i) sends input i and checks the answer."""

    def __init__(self, way, inputs, gateway_port, container_port, baseline_port=None, floor_port=None):
        if way.startswith(BASELINE):
            way, gateway_port = way[len(BASELINE):], baseline_port
        elif way == FLOOR:
            way, gateway_port = "octet-stream", floor_port
        self.way, self.bodies = way, inputs.bodies[way]
        if way == "grpc-direct":
            self.channel = grpc.insecure_channel("127.0.0.1:%d" % container_port,
                                                 options=[("grpc.max_send_message_length", -1),
                                                          ("grpc.max_receive_message_length", -1)])
            self.stub = self.channel.unary_unary(METHOD)
        else:
            self.http = NoDelayConnection("127.0.0.1", gateway_port, timeout=30)

    def call(self, i):
        body = self.bodies[i % len(self.bodies)]
        if self.way == "grpc-direct":
            answer = pb.ModelInferResponse.FromString(self.stub(body, timeout=30))
            if list(answer.outputs[0].shape) != [1]:
                raise SystemExit("grpc-direct: unexpected answer %s" % answer)
            return
        if self.way == "oip-binary":
            length, data = body
            self.http.request("POST", "/v2/models/%s/infer" % MODEL, data, {
                "Content-Type": "application/octet-stream", HEADER_LENGTH: str(length)})
        else:
            content_type = "application/json" if self.way == "json-base64" else "application/octet-stream"
            self.http.request("POST", "/%s/predict" % APP, body, {"Content-Type": content_type})
        response = self.http.getresponse()
        text = response.read()
        if response.status != 200 or b'"default":true' in text:
            raise SystemExit("%s: %d %s" % (self.way, response.status, text[:300]))

    def close(self):
        if self.way == "grpc-direct":
            self.channel.close()
        else:
            self.http.close()


def one_client(way, inputs, ports, calls, offset):
    c = Client(way, inputs, *ports)
    try:
        latencies = []
        for i in range(calls):
            start = time.perf_counter_ns()
            c.call(offset + i)
            latencies.append((time.perf_counter_ns() - start) / 1e6)
        return latencies
    finally:
        c.close()


def many_clients(way, inputs, ports, clients, seconds):
    """(calls per second, latencies in ms) of `clients` closed-loop clients for `seconds`."""
    latencies, errors = [], []
    start_line = threading.Barrier(clients + 1)
    stop_at = [float("inf")]  # until the clients have all started

    def run(k):
        c = Client(way, inputs, *ports)
        try:
            c.call(k)
            start_line.wait()
            mine, i = [], k * 100_000
            while time.perf_counter() < stop_at[0]:
                t0 = time.perf_counter_ns()
                c.call(i)
                mine.append((time.perf_counter_ns() - t0) / 1e6)
                i += 1
            latencies.extend(mine)
        except BaseException as e:  # noqa: B902 - reported below
            errors.append(e)
            start_line.abort()
        finally:
            c.close()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    try:
        start_line.wait()
    except threading.BrokenBarrierError:
        pass
    began = time.perf_counter()
    stop_at[0] = began + seconds
    for t in threads:
        t.join()
    if errors:
        raise SystemExit("%s with %d clients: %s" % (way, clients, errors[0]))
    return len(latencies) / (time.perf_counter() - began), latencies


def admin(port, endpoint, body):
    request = urllib.request.Request("http://127.0.0.1:%d/admin/%s" % (port, endpoint), json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as r:
        r.read()


def await_ready(port, seconds=120):
    until = time.time() + seconds
    while time.time() < until:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/v2/models/%s/ready" % (port, MODEL), timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("the gateway's model did not become ready")


def start_container(out):
    log = open(os.path.join(out, "container.log"), "w")
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "python_noop_container.py")],
                         env=dict(os.environ, PORT="0", SDK_DIR=ROOT), stdout=subprocess.PIPE, stderr=log, text=True)
    line = p.stdout.readline()
    if not line.startswith("READY port="):
        p.kill()
        raise SystemExit("the container did not start: %r" % line)
    return p, int(line.strip().split("=")[1])


def start_gateway(jar, out, log_name):
    port, admin_port = free_port(), free_port()
    log = open(os.path.join(out, log_name), "w")
    cmd = ["java", "-Xmx1g", "-jar", jar, "--server.port=%d" % port, "--server.address=127.0.0.1",
           "--servegate.admin.port=%d" % admin_port, "--servegate.admin.address=127.0.0.1",
           "--servegate.cache.enabled=false", "--servegate.oip.grpc-port=0", "--servegate.oip.timeout=5s"]
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    until = time.time() + 120
    while True:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/admin/ping" % admin_port, timeout=5):
                return p, port, admin_port
        except OSError:
            if p.poll() is not None or time.time() > until:
                raise SystemExit("the gateway did not start; see %s/gateway.log" % out)
            time.sleep(0.3)


def start_floor(jar, container_port, out):
    log = open(os.path.join(out, "floor.log"), "w")
    p = subprocess.Popen(["java", "-Xmx1g", "-cp", jar, "io.servegate.loadgen.harness.FloorServer", "0",
                          "127.0.0.1:%d" % container_port, MODEL], stdout=subprocess.PIPE, stderr=log, text=True)
    line = p.stdout.readline()
    if not line.startswith("listening on "):
        p.kill()
        raise SystemExit("the floor server did not start: %r; see %s/floor.log" % (line, out))
    return p, int(line.split()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway-jar", required=True)
    parser.add_argument("--baseline-jar", help="another revision's gateway, measured beside this one")
    parser.add_argument("--baseline-ways", default="json-base64",
                        help="the ways measured through the baseline gateway, comma-separated (default json-base64)")
    parser.add_argument("--floor-jar", help="the load generator's jar: adds the floor server as a way")
    parser.add_argument("--input-bytes", type=int, default=150528)
    parser.add_argument("--calls", type=int, default=300, help="calls of the one-client loop, per round and way")
    parser.add_argument("--warmup-calls", type=int, default=100)
    parser.add_argument("--warmup-s", type=float, default=10,
                        help="seconds of --clients closed-loop calls per way before the rounds, for the JIT")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=6, help="length of the many-client loop, per round and way")
    parser.add_argument("--slo-ms", type=int, default=1000, help="the app's latency SLO")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "data-path"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    inputs = Inputs(64, args.input_bytes)
    container, container_port = start_container(args.out)
    servers = []
    baseline_ways = [w.strip() for w in args.baseline_ways.split(",") if w.strip()] if args.baseline_jar else []
    for w in baseline_ways:
        if w not in WAYS or w == "grpc-direct":
            raise SystemExit("--baseline-ways: %r is not a way through the gateway" % w)
    ways = WAYS + tuple(BASELINE + w for w in baseline_ways) + ((FLOOR,) if args.floor_jar else ())
    try:
        ports = [None, container_port, None, None]
        if args.floor_jar:
            floor, ports[3] = start_floor(args.floor_jar, container_port, args.out)
            servers.append(floor)
        for jar, log_name, slot in ((args.gateway_jar, "gateway.log", 0), (args.baseline_jar, "baseline-gateway.log", 2)):
            if jar is None:
                continue
            gateway, port, admin_port = start_gateway(jar, args.out, log_name)
            servers.append(gateway)
            admin(admin_port, "add_model", {"model_name": MODEL, "model_version": "1", "input_type": "bytes"})
            admin(admin_port, "add_container", {"model_name": MODEL, "model_version": "1",
                                                "address": "127.0.0.1:%d" % container_port})
            admin(admin_port, "add_app", {"name": APP, "input_type": "bytes", "default_output": "none",
                                          "latency_slo_micros": args.slo_ms * 1000, "candidate_model_names": [MODEL]})
            await_ready(port)
            ports[slot] = port
        for way in ways:
            one_client(way, inputs, ports, args.warmup_calls, 0)
            many_clients(way, inputs, ports, args.clients, args.warmup_s)
        load_before = load_average()
        single, multi = {w: [] for w in ways}, {w: [] for w in ways}
        rates = {w: [] for w in ways}
        for r in range(args.rounds):
            for way in ways:
                single[way] += one_client(way, inputs, ports, args.calls, r * args.calls)
            for way in ways:
                rate, latencies = many_clients(way, inputs, ports, args.clients, args.seconds)
                rates[way].append(rate)
                multi[way] += latencies
        batch32 = []
        channel = grpc.insecure_channel("127.0.0.1:%d" % container_port,
                                        options=[("grpc.max_send_message_length", -1),
                                                 ("grpc.max_receive_message_length", -1)])
        stub = channel.unary_unary(METHOD)
        for i in range(20 + 100):
            start = time.perf_counter_ns()
            stub(inputs.batch32, timeout=30)
            if i >= 20:
                batch32.append((time.perf_counter_ns() - start) / 1e6)
        channel.close()
        load_after = load_average()
    finally:
        for server in servers:
            server.terminate()
            server.wait(60)
        container.terminate()
        container.wait(60)
    rows = []
    for way in ways:
        s, m = sorted(single[way]), sorted(multi[way])
        rows.append(dict(way=way, one_client=dict(calls=len(s), p50_ms=round(percentile(s, 0.5), 3),
                                                  p99_ms=round(percentile(s, 0.99), 3)),
                         many_clients=dict(clients=args.clients, calls=len(m),
                                           per_second=round(sum(rates[way]) / len(rates[way]), 1),
                                           p50_ms=round(percentile(m, 0.5), 3), p99_ms=round(percentile(m, 0.99), 3))))
    floor = rows[WAYS.index("grpc-direct")]["one_client"]["p50_ms"]
    for row in rows:
        row["one_client"]["p50_over_direct_ms"] = round(row["one_client"]["p50_ms"] - floor, 3)
    batch32.sort()
    report = dict(benchmark="data-path", date_utc=datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds"), machine="%s, %d cores" % (platform.node(), os.cpu_count()),
        load_before=load_before, load_after=load_after, input_bytes=args.input_bytes, rounds=args.rounds,
        slo_ms=args.slo_ms, warmup_s=args.warmup_s, baseline_jar=args.baseline_jar, results=rows,
        grpc_direct_batch32=dict(calls=len(batch32), p50_ms=round(percentile(batch32, 0.5), 3),
                                 p99_ms=round(percentile(batch32, 0.99), 3)))
    with open(os.path.join(args.out, "data-path.json"), "w") as f:
        json.dump(report, f, indent=2)
    print("load %s -> %s; inputs of %d bytes; %d rounds" % (load_before, load_after, args.input_bytes, args.rounds))
    print("%-22s %10s %10s %12s | %9s %10s %10s" % ("way", "1c p50 ms", "1c p99 ms", "p50-direct", "%dc /s" %
                                                    args.clients, "p50 ms", "p99 ms"))
    for r in rows:
        o, m = r["one_client"], r["many_clients"]
        print("%-22s %10.2f %10.2f %12.2f | %9.0f %10.2f %10.2f" % (r["way"], o["p50_ms"], o["p99_ms"],
                                                                  o["p50_over_direct_ms"], m["per_second"],
                                                                  m["p50_ms"], m["p99_ms"]))
    b = report["grpc_direct_batch32"]
    print("grpc-direct, one batch of 32: p50 %.2f ms, p99 %.2f ms" % (b["p50_ms"], b["p99_ms"]))
    print("report: %s" % os.path.join(args.out, "data-path.json"))


if __name__ == "__main__":
    main()

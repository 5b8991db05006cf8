#!/usr/bin/env python3
"""Cold starts and LRU unloading of the onnx container serving many models (run with /usr/bin/python3).

Starts containers/onnx/target/onnx-container.jar on a model repository made by
bench/model-repository.sh (200 model versions of the four Fashion-MNIST models unless --count
says otherwise), with a memory budget smaller than the repository, then asks every model version
in turn for a batch of real test images: each call waits for its model's load, which the
container reports in the response parameter servegate_load_time_ns. A second pass over the
versions loaded last finds them loaded. Prints per-architecture load times, the resident set the
budget allowed, and checks every answer against the first model of its architecture.
Usage: /usr/bin/python3 bench/many-models-onnx.py [--count 200] [--budget-bytes 10000000] [--batch 8]
Results: bench/results/many-models-onnx.json and a summary on standard output.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "model-container-sdk", "python"))
sys.path.insert(0, os.path.join(ROOT, "containers"))
import grpc  # noqa: E402
import fashion_mnist  # noqa: E402
from servegate import _stubs  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--budget-bytes", type=int, default=10_000_000)
    ap.add_argument("--batch", type=int, default=8)
    args = ap.parse_args()
    pb, pb_grpc = _stubs.load()
    x, _ = fashion_mnist.load("test")
    images = x[:args.batch]
    work = tempfile.mkdtemp(prefix="servegate-repo-")
    repo = os.path.join(work, "repo")
    subprocess.run([os.path.join(ROOT, "bench", "model-repository.sh"), repo, str(args.count)], check=True)
    jar = os.path.join(ROOT, "containers", "onnx", "target", "onnx-container.jar")
    proc = subprocess.Popen(["java", "-jar", jar, "--model-dir", repo, "--host", "127.0.0.1", "--port", "0",
                             "--memory-budget-bytes", str(args.budget_bytes), "--intra-op-threads", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = None
        for line in proc.stdout:
            m = re.search(r"READY port=(\d+)", line)
            if m:
                port = int(m.group(1))
                break
        if port is None:
            raise SystemExit("the container exited before READY")
        channel = grpc.insecure_channel("127.0.0.1:%d" % port)
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        index = stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=60)
        versions = [(m.name, m.version) for m in index.models]
        request = lambda name, version: pb.ModelInferRequest(  # noqa: E731
            model_name=name, model_version=version,
            inputs=[pb.ModelInferRequest.InferInputTensor(name="input", datatype="FP32", shape=list(images.shape))],
            raw_input_contents=[images.astype("<f4").tobytes()])

        cold, warm_service, labels, wrong = {}, [], {}, 0
        for name, version in versions:
            r = stub.ModelInfer(request(name, version), timeout=120)
            load = r.parameters["servegate_load_time_ns"].int64_param if "servegate_load_time_ns" in r.parameters else 0
            cold.setdefault(name, []).append(load / 1e6)
            out = bytes(r.raw_output_contents[0])
            if labels.setdefault(name, out) != out:
                wrong += 1
        ready = stub.RepositoryIndex(pb.RepositoryIndexRequest(ready=True), timeout=60).models
        resident = [(m.name, m.version) for m in ready]
        sizes = [int(re.search(r"size_bytes=(\d+)", m.reason).group(1)) for m in ready]
        rewarmed = 0
        for name, version in resident:
            r = stub.ModelInfer(request(name, version), timeout=120)
            if "servegate_load_time_ns" not in r.parameters:
                rewarmed += 1
            warm_service.append(r.parameters["servegate_service_time_ns"].int64_param / 1e6)
        result = {
            "model_versions": len(versions), "budget_bytes": args.budget_bytes, "batch": args.batch,
            "resident_after_pass": len(resident), "resident_bytes": sum(sizes),
            "second_pass_without_load": rewarmed, "answers_differing_from_first_of_architecture": wrong,
            "load_ms": {name: {"n": len(v), "median": statistics.median(v), "p90": sorted(v)[int(0.9 * (len(v) - 1))],
                               "max": max(v)} for name, v in cold.items()},
            "warm_service_ms_median": statistics.median(warm_service) if warm_service else None,
            "loadavg": os.getloadavg(),
        }
        os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
        with open(os.path.join(ROOT, "bench", "results", "many-models-onnx.json"), "w") as f:
            json.dump(result, f, indent=2)
        print(json.dumps(result, indent=2))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

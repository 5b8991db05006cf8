#!/usr/bin/python3
"""Wrong-sized images sent together with good ones, to a real image model through the gateway.

    /usr/bin/python3 bench/isolation-images.py --gateway-jar JAR [--rounds 3] [--good 20] [--wrong 20]
        [--arch resnet50] [--slo-ms 30000] [--out DIR]

The image-classifier container (containers/image-classifier: a torchvision model on the CPU, random
weights from its seed, a `bytes` model declaring 3x224x224 uint8 inputs, 150,528 bytes) behind one
gateway (a child JVM on loopback, cache off). Each round sends --good distinct random images of
150,528 bytes and --wrong inputs of 1,000 bytes at once, interleaved, each from its own thread as
an application/octet-stream body to /{app}/predict. Reports per round how many good images were
predicted, got the default or failed, and what the wrong ones got (the gateway refuses them with
400 before any reaches the container, so none can fail a batch of good ones). Writes
isolation-images.json to --out.
"""

import argparse
import datetime
import importlib.util
import json
import os
import random
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# the gateway launcher, the admin call and the machine's load: as the data-path benchmark has them
_spec = importlib.util.spec_from_file_location("data_path", os.path.join(HERE, "data-path.py"))
data_path = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(data_path)

APP = "images"
IMAGE_BYTES = 3 * 224 * 224


def start_classifier(arch, out):
    log = open(os.path.join(out, "container.log"), "w")
    p = subprocess.Popen([sys.executable, os.path.join(ROOT, "containers", "image-classifier", "serve.py"),
                          "--arch", arch, "--name", arch, "--device", "cpu", "--max-batch-size", "16",
                          "--classes", "1000"],
                         env=dict(os.environ, PORT="0", HOST="127.0.0.1", WARMUP_BATCH_SIZES="1,16", WARMUP_RUNS="1"),
                         stdout=subprocess.PIPE, stderr=log, text=True)
    line = p.stdout.readline()
    if not line.startswith("READY port="):
        p.kill()
        raise SystemExit("the container did not start: %r (see %s/container.log)" % (line, out))
    return p, int(line.strip().split("=")[1])


def predict(port, body):
    request = urllib.request.Request("http://127.0.0.1:%d/%s/predict" % (port, APP), body,
                                     {"Content-Type": "application/octet-stream"})
    try:
        with urllib.request.urlopen(request, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")
    except OSError as e:
        return 0, {"error": str(e)}


def one_round(port, good, wrong, rng):
    bodies = [("good", rng.randbytes(IMAGE_BYTES)) for _ in range(good)] + [("wrong", rng.randbytes(1000))
                                                                            for _ in range(wrong)]
    rng.shuffle(bodies)
    outcomes = [None] * len(bodies)
    start = threading.Barrier(len(bodies))

    def send(i):
        start.wait()
        t = time.perf_counter()
        status, answer = predict(port, bodies[i][1])
        outcomes[i] = (bodies[i][0], status, answer, time.perf_counter() - t)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts = {"good_predicted": 0, "good_default": 0, "good_failed": 0, "wrong_400": 0, "wrong_other": 0}
    examples = {}
    for kind, status, answer, _ in outcomes:
        if kind == "good":
            key = ("good_predicted" if status == 200 and not answer.get("default")
                   else "good_default" if status == 200 else "good_failed")
        else:
            key = "wrong_400" if status == 400 else "wrong_other"
        counts[key] += 1
        examples.setdefault(key, {"status": status, "answer": answer})
    counts["seconds"] = max(o[3] for o in outcomes)
    return counts, examples


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway-jar", required=True)
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--good", type=int, default=20)
    parser.add_argument("--wrong", type=int, default=20)
    parser.add_argument("--slo-ms", type=int, default=30000, help="the app's SLO: long, so that only errors fail")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "isolation-images"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    container, container_port = start_classifier(args.arch, args.out)
    gateway = None
    try:
        gateway, port, admin_port = data_path.start_gateway(args.gateway_jar, args.out, "gateway.log")
        data_path.admin(admin_port, "add_model", {"model_name": args.arch, "model_version": "1",
                                                  "input_type": "bytes", "batch_size": 16})
        data_path.admin(admin_port, "add_container", {"model_name": args.arch, "model_version": "1",
                                                      "address": "127.0.0.1:%d" % container_port})
        data_path.admin(admin_port, "add_app", {"name": APP, "input_type": "bytes", "default_output": "none",
                                                "latency_slo_micros": args.slo_ms * 1000,
                                                "candidate_model_names": [args.arch]})
        rng = random.Random(11)
        until = time.time() + 120
        while predict(port, rng.randbytes(IMAGE_BYTES))[1].get("default", True):
            if time.time() > until:
                raise SystemExit("no prediction from the gateway; see %s/gateway.log" % args.out)
            time.sleep(0.5)
        load_before = data_path.load_average()
        rounds = []
        for r in range(args.rounds):
            counts, examples = one_round(port, args.good, args.wrong, rng)
            rounds.append({"counts": counts, "examples": examples})
            print("round %d: good %d predicted, %d default, %d failed; wrong %d got 400, %d other; %.1f s"
                  % (r + 1, counts["good_predicted"], counts["good_default"], counts["good_failed"],
                     counts["wrong_400"], counts["wrong_other"], counts["seconds"]), flush=True)
        report = {"settings": vars(args), "utc": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                  "load_average": {"before": load_before, "after": data_path.load_average()}, "rounds": rounds}
        with open(os.path.join(args.out, "isolation-images.json"), "w") as f:
            json.dump(report, f, indent=1)
        print("load average before %s, after %s; results in %s" % (load_before, report["load_average"]["after"],
                                                                   args.out))
    finally:
        if gateway is not None:
            gateway.terminate()
            gateway.wait(30)
        container.terminate()
        container.wait(30)


if __name__ == "__main__":
    main()

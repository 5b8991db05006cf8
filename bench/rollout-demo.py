#!/usr/bin/env python3
"""Drives the worked example of docs/rollouts.md: real Fashion-MNIST test images as queries to the
demo's app, each from a user of its own (uid), each followed by its true label as feedback, until
the model's rollout is no longer running or --max-queries were sent (past the 10,000 images, they
come round again, each query still from a user of its own). Prints the rollout's progress
and, at the end, its outcome, the queries sent, how many the candidate answered, and the time.

Usage: bench/rollout-demo.py [--app fashion] [--model fmnist-cnn] [--query http://127.0.0.1:1337]
       [--admin http://127.0.0.1:1338/admin] [--threads 8] [--max-queries 10000]
The admin token is read from SERVEGATE_ADMIN_TOKEN when set. Standard library only.
"""
import argparse
import gzip
import json
import os
import struct
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

DATASET = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        magic, count = struct.unpack(">II", f.read(8))
        dims = [struct.unpack(">I", f.read(4))[0] for _ in range((magic & 0xFF) - 1)]
        size = 1
        for d in dims:
            size *= d
        data = f.read(count * size)
    return [data[i * size:(i + 1) * size] for i in range(count)]


def post(url, body, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--app", default="fashion")
    p.add_argument("--model", default="fmnist-cnn")
    p.add_argument("--query", default="http://127.0.0.1:1337")
    p.add_argument("--admin", default="http://127.0.0.1:1338/admin")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--max-queries", type=int, default=10000)
    a = p.parse_args()
    token = os.environ.get("SERVEGATE_ADMIN_TOKEN")
    images = read_idx(os.path.join(DATASET, "t10k-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(DATASET, "t10k-labels-idx1-ubyte.gz"))
    n = a.max_queries
    state = {"sent": 0, "defaults": 0, "by_version": {}, "observed": 0}
    lock = threading.Lock()
    done = threading.Event()

    def one(i):
        if done.is_set():
            return
        uid = "demo-u%d" % i
        k = i % len(images)
        x = [round(b / 255.0, 4) for b in images[k]]  # the demo's own scaling of the pixels
        answer = post("%s/%s/predict" % (a.query, a.app), {"uid": uid, "input": x})
        fb = post("%s/%s/update" % (a.query, a.app), {"uid": uid, "input": x, "label": labels[k][0]})
        with lock:
            state["sent"] += 1
            state["defaults"] += 1 if answer.get("default") else 0
            if fb.get("observed"):
                state["observed"] += 1
                v = fb.get("version")
                state["by_version"][v] = state["by_version"].get(v, 0) + 1

    start = time.time()
    rollout = post(a.admin + "/get_rollout", {"model_name": a.model}, token)
    print("rollout %s: %s of %s:%s against %s, steps %s" % (rollout["id"], rollout["status"], a.model,
          rollout["candidate_version"], rollout["baseline_version"], rollout["steps"]), flush=True)
    with ThreadPoolExecutor(a.threads) as pool:
        for chunk in range(0, n, 250):
            list(pool.map(one, range(chunk, min(n, chunk + 250))))
            rollout = post(a.admin + "/get_rollout", {"model_name": a.model}, token)
            c = rollout["evidence"]["candidate"]
            print("%6.1f s  %5d queries  status %-11s share %.3f  candidate: %d queries, %d labels, mean loss %s"
                  % (time.time() - start, state["sent"], rollout["status"], rollout["share"], c["queries"],
                     c["feedback"], c.get("mean_loss")), flush=True)
            if rollout["status"] != "running":
                done.set()
                break
    elapsed = time.time() - start
    last = rollout["history"][-1] if rollout["history"] else {}
    print(json.dumps({"status": rollout["status"], "queries": state["sent"], "defaults": state["defaults"],
                      "labels_joined_by_version": state["by_version"], "seconds": round(elapsed, 1),
                      "evidence": rollout["evidence"], "last_decision": last}, indent=2))


if __name__ == "__main__":
    main()

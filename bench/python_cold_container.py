#!/usr/bin/python3
"""A Python SDK container that behaves like an accelerator autotuning each new shape, for
bench/cold-shapes.sh: a batch of b takes BETA_MS + ALPHA_MS·b ms, and the first batch of each size
COLD_MS more (the SDK's warm-up included), and with STALL_MS set, the container stands still that
long every STALL_EVERY_MS (5000). A `floats` model whose output is the index of the
largest input. Configured through the environment like any SDK container (PORT, MAX_BATCH_SIZE,
WARMUP_BATCH_SIZES, ...).
"""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "model-container-sdk", "python"))

import servegate  # noqa: E402

BETA_S = float(os.environ.get("BETA_MS", "10")) / 1e3
ALPHA_S = float(os.environ.get("ALPHA_MS", "1")) / 1e3
COLD_S = float(os.environ.get("COLD_MS", "300")) / 1e3
STALL_S = float(os.environ.get("STALL_MS", "0")) / 1e3
STALL_EVERY_S = float(os.environ.get("STALL_EVERY_MS", "5000")) / 1e3
ORIGIN = time.monotonic()
seen = set()


def finish(start, work, origin=ORIGIN, stall=STALL_S, every=STALL_EVERY_S):
    """When work starting at start ends: a stall of stall seconds begins every every seconds after
    origin, and a batch running or starting during one waits for its end. The period is counted,
    not recomputed from the clock, so that rounding cannot hold it at a period's edge."""
    if stall <= 0:
        return start + work
    t, left = start - origin, work
    k = int(t // every)  # the period t is in; stall k begins at k * every, for k >= 1
    while True:
        if k >= 1 and t < k * every + stall:
            t = k * every + stall
        if t + left <= (k + 1) * every:
            return origin + t + left
        left -= (k + 1) * every - t
        t = (k + 1) * every
        k += 1


def predict_batch(inputs):
    start = time.monotonic()
    cost = BETA_S + ALPHA_S * len(inputs)
    if len(inputs) not in seen:
        seen.add(len(inputs))
        cost += COLD_S
    time.sleep(max(0.0, finish(start, cost) - time.monotonic()))
    return [str(int(max(range(len(v)), key=lambda i: v[i]))) for v in inputs]


if __name__ == "__main__":
    servegate.serve(predict_batch, name=os.environ.get("MODEL_NAME", "cold"), input_type="floats", input_length=4)

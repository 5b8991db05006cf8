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


def finish(start, work):
    """When work starting at start ends: a stall of STALL_S begins every STALL_EVERY_S after ORIGIN,
    and a batch running or starting during one waits for its end."""
    t, left = start, work
    while STALL_S > 0:
        k = int((t - ORIGIN) // STALL_EVERY_S)
        if k >= 1 and t < ORIGIN + k * STALL_EVERY_S + STALL_S:
            t = ORIGIN + k * STALL_EVERY_S + STALL_S
        nxt = ORIGIN + (int((t - ORIGIN) // STALL_EVERY_S) + 1) * STALL_EVERY_S
        if t + left <= nxt:
            break
        left -= nxt - t
        t = nxt
    return t + left


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

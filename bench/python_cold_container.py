#!/usr/bin/python3
"""A Python SDK container that behaves like an accelerator autotuning each new shape, for
bench/cold-shapes.sh: a batch of b takes BETA_MS + ALPHA_MS·b ms, and the first batch of each size
COLD_MS more (the SDK's warm-up included). A `floats` model whose output is the index of the
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
seen = set()


def predict_batch(inputs):
    cost = BETA_S + ALPHA_S * len(inputs)
    if len(inputs) not in seen:
        seen.add(len(inputs))
        cost += COLD_S
    time.sleep(cost)
    return [str(int(max(range(len(v)), key=lambda i: v[i]))) for v in inputs]


if __name__ == "__main__":
    servegate.serve(predict_batch, name=os.environ.get("MODEL_NAME", "cold"), input_type="floats", input_length=4)

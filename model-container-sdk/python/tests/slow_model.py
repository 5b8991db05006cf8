"""A model container for the drain test: each batch announces itself on stderr, then takes
SLOW_SECONDS; it is configured through the environment like any container."""

import os
import sys
import time

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import servegate  # noqa: E402


def predict_batch(inputs):
    print("BATCH %d" % len(inputs), file=sys.stderr, flush=True)
    time.sleep(float(os.environ.get("SLOW_SECONDS", "2")))
    return ["slow:" + s for s in inputs]


if __name__ == "__main__":
    servegate.serve(predict_batch, input_type="strings")

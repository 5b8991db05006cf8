#!/usr/bin/python3
"""A no-op model container on the Python SDK found in SDK_DIR (default: this checkout's), for
bench/python-sdk-direct.py: a `bytes` model that answers "0" for every input, so that what is
measured is the SDK and gRPC, not a model.

With PROFILE_OUT=FILE it runs the server's event loop and its predictor thread under cProfile
and writes both profiles' top entries to FILE when it stops (SIGTERM).
"""

import cProfile
import io
import os
import pstats
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get("SDK_DIR") or os.path.join(HERE, ".."), "model-container-sdk", "python"))

import servegate  # noqa: E402


def noop(batch):
    return ["0"] * len(batch)


def main():
    options = dict(name="noop", input_type="bytes", host="127.0.0.1", port=int(os.environ.get("PORT", "0")),
                   max_message_bytes=64 << 20)
    if "warmup_batch_sizes" in servegate.ModelContainer.__init__.__code__.co_varnames:
        options["warmup_batch_sizes"] = []  # nothing to warm in a no-op
    container = servegate.ModelContainer(noop, **options)
    out = os.environ.get("PROFILE_OUT")
    if not out:
        container.run_until_shutdown()
        return
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    container.start()
    # CPU time of each thread: wall-clock time on a shared machine would mostly measure the others
    profiles = {"event loop thread": cProfile.Profile(time.thread_time),
                "predictor thread": cProfile.Profile(time.thread_time)}
    on_loop = {"event loop thread": lambda f: container._loop.call_soon_threadsafe(f),
               "predictor thread": lambda f: container._pool.submit(f)}
    for title, profile in profiles.items():
        on_loop[title](profile.enable)
    print("READY port=%d" % container.port, flush=True)
    stop.wait()
    text = io.StringIO()
    for title, profile in profiles.items():
        done = threading.Event()
        on_loop[title](lambda p=profile: (p.disable(), done.set()))
        done.wait(10)
        text.write("==== %s\n" % title)
        pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(15)
    with open(out, "w") as f:
        f.write(text.getvalue())
    container.close()


if __name__ == "__main__":
    main()

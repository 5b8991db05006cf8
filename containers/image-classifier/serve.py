#!/usr/bin/python3
"""Serves a torchvision image classifier (ResNet-50 by default) over OIP gRPC with the Python SDK.

    /usr/bin/python3 containers/image-classifier/serve.py                       # CPU, or CUDA when present
    python3 containers/image-classifier/serve.py --device cuda --max-batch-size 64 --cudnn-benchmark
    python3 containers/image-classifier/serve.py --device cuda --profile          # the model alone, in process

Input type `bytes`: each input is one image, 3 x H x W uint8 (channels first, RGB; H = W =
--image-size), as a BYTES element or, for a whole batch at once, a UINT8 tensor [N, 3*H*W].
Output: the argmax class index as text. Weights: --weights / MODEL_PATH, a state_dict file read
with torch.load(weights_only=True) from this directory or one SERVEGATE_MODEL_DIRS names; without
one, random weights from --seed (nothing is downloaded). Every batch size up to --max-batch-size
is warmed up before the container reports ready (the SDK's WARMUP_* variables adjust that).

--profile runs no server: it times the predictor alone (raw bytes -> numpy -> device -> forward
-> argmax -> host) per batch size and prints p50/p90 and images/s, and the JSON with --profile-out.
Each option has an environment default, named in --help.
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
try:
    import servegate
except ImportError:  # running from a checkout: use the SDK next door
    sys.path.insert(0, os.path.join(HERE, "..", "..", "model-container-sdk", "python"))
    import servegate

import torch  # noqa: E402

from classifier import ImageClassifier, random_images  # noqa: E402


def _env(key, default):
    value = os.environ.get(key)
    return value if value not in (None, "") else default


def _flag(text):
    return str(text).lower() in ("1", "true", "yes", "on")


def parse_args(argv=None):
    # no abbreviations: the gateway checks the path options (--weights, --profile-out) by their full names
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--name", default=_env("MODEL_NAME", None), help="model name (env MODEL_NAME; default: --arch)")
    p.add_argument("--arch", default=_env("ARCH", "resnet50"), help="torchvision classification model (env ARCH)")
    p.add_argument("--weights", default=_env("MODEL_PATH", None),
                   help="state_dict file (env MODEL_PATH); random weights without one")
    p.add_argument("--classes", type=int, default=int(_env("CLASSES", 1000)), help="output classes (env CLASSES)")
    p.add_argument("--image-size", type=int, default=int(_env("IMAGE_SIZE", 224)), help="H = W (env IMAGE_SIZE)")
    p.add_argument("--device", default=_env("DEVICE", "cuda" if torch.cuda.is_available() else "cpu"),
                   help="cpu, cuda or cuda:N (env DEVICE)")
    p.add_argument("--precision", choices=("auto", "fp16", "fp32"), default=_env("PRECISION", "auto"),
                   help="auto: fp16 on CUDA, fp32 on the CPU (env PRECISION)")
    p.add_argument("--cudnn-benchmark", action=argparse.BooleanOptionalAction,
                   default=_flag(_env("CUDNN_BENCHMARK", "true")),
                   help="cuDNN autotuning of each batch shape, paid in the warm-up (env CUDNN_BENCHMARK)")
    p.add_argument("--torch-threads", type=int, default=int(_env("TORCH_THREADS", 0)),
                   help="CPU threads of torch, 0 for torch's default (env TORCH_THREADS)")
    p.add_argument("--max-batch-size", type=int, default=int(_env("MAX_BATCH_SIZE", 64)),
                   help="largest batch taken, and warmed (env MAX_BATCH_SIZE)")
    p.add_argument("--seed", type=int, default=int(_env("SEED", 0)), help="seed of the random weights (env SEED)")
    p.add_argument("--profile", action="store_true", help="time the model in process, serve nothing")
    p.add_argument("--profile-batch-sizes", default="1,2,4,8,16,32,64", help="batch sizes --profile times")
    p.add_argument("--profile-iterations", type=int, default=50, help="timed batches per size (after 5 untimed)")
    p.add_argument("--profile-out", help="write the profile as JSON to this file")
    return p.parse_args(argv)


def build(args):
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    weights = None
    if args.weights:
        weights = servegate.model_path(args.weights, HERE)
    half = None if args.precision == "auto" else args.precision == "fp16"
    return ImageClassifier(args.arch, weights=weights, classes=args.classes, image_size=args.image_size,
                           device=args.device, half=half, seed=args.seed)


def describe(args, model):
    return "%s on %s, %s, %dx%d images, cudnn.benchmark %s, %s weights" % (
        args.arch, model.device, str(model.dtype).replace("torch.", ""), args.image_size, args.image_size,
        "on" if args.cudnn_benchmark else "off", "file" if args.weights else "random")


def profile(args, model):
    """p50/p90 of the predictor alone per batch size, as the server would call it."""
    sizes = [int(b) for b in args.profile_batch_sizes.split(",")]
    rows = []
    for size in sizes:
        images = random_images(size, args.image_size, seed=size)
        raw = b"".join(len(row).to_bytes(4, "little") + row.tobytes() for row in images)
        times = []
        for i in range(5 + args.profile_iterations):
            start = time.perf_counter_ns()
            model(servegate.BYTES.decode("BYTES", [size], raw=raw))
            if i >= 5:
                times.append((time.perf_counter_ns() - start) / 1e6)
        times.sort()
        p50 = statistics.median(times)
        rows.append(dict(batch=size, p50_ms=round(p50, 3), p90_ms=round(times[int(0.9 * (len(times) - 1))], 3),
                         images_per_s=round(size / p50 * 1000, 1)))
        print("batch %3d: p50 %8.2f ms  p90 %8.2f ms  %9.1f images/s" % (
            size, rows[-1]["p50_ms"], rows[-1]["p90_ms"], rows[-1]["images_per_s"]), flush=True)
    best = max(rows, key=lambda r: r["images_per_s"])
    print("in-process capacity: %.1f images/s (batch %d)" % (best["images_per_s"], best["batch"]), flush=True)
    if args.profile_out:
        with open(args.profile_out, "w") as f:
            json.dump(dict(model=describe(args, model), iterations=args.profile_iterations, batches=rows,
                           capacity_images_per_s=best["images_per_s"], capacity_batch=best["batch"]), f, indent=2)


def main():
    args = parse_args()
    try:
        model = build(args)
    except (servegate.ModelPathError, FileNotFoundError) as e:
        sys.exit("image-classifier: %s" % e)
    except Exception as e:  # noqa: BLE001 - weights_only refuses anything but tensors, with various errors
        sys.exit("image-classifier: cannot load %s as %s weights: %s" % (args.weights, args.arch, e))
    print("image-classifier: %s" % describe(args, model), file=sys.stderr, flush=True)
    if args.profile:
        profile(args, model)
        return
    servegate.serve(model, name=args.name or args.arch, input_type="bytes", input_length=model.input_bytes,
                    max_batch_size=args.max_batch_size)


if __name__ == "__main__":
    main()

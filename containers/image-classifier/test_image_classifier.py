"""The image classifier container in its own process, on the CPU with small images: its answers over
OIP gRPC (a BYTES tensor of images, or one UINT8 tensor for the whole batch) are the in-process
model's, from the weights file it was given; it warms every batch size before it is ready and
reports it; bad inputs are refused; a planted pickle never runs; the profiler prints the model's
own latency per batch size."""

import os
import subprocess
import sys

import grpc
import numpy as np
import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from classifier import ImageClassifier, random_images  # noqa: E402
from conftest import Plant, run_to_exit  # noqa: E402
from servegate.oip import pb  # noqa: E402

SERVE = os.path.join(HERE, "serve.py")
SIZE = 32  # 3x32x32 images keep the networks quick on a CPU
ARCH = "resnet18"  # the default ResNet-50 is profiled below; the serving tests take a smaller one
MAX_BATCH = 4
SMALL = dict(ARCH=ARCH, IMAGE_SIZE=str(SIZE), CLASSES="10", DEVICE="cpu", TORCH_THREADS="1",
             MAX_BATCH_SIZE=str(MAX_BATCH))


def infer(c, images, form="bytes"):
    req = pb.ModelInferRequest(model_name=ARCH)
    if form == "bytes":
        req.inputs.add(name="input", datatype="BYTES", shape=[len(images)])
        req.raw_input_contents.append(b"".join(len(x).to_bytes(4, "little") + x.tobytes() for x in images))
    else:
        req.inputs.add(name="input", datatype="UINT8", shape=list(images.shape))
        req.raw_input_contents.append(images.tobytes())
    resp = c.stub.ModelInfer(req, timeout=60)
    raw, out, pos = resp.raw_output_contents[0], [], 0
    while pos < len(raw):
        n = int.from_bytes(raw[pos:pos + 4], "little")
        out.append(int(raw[pos + 4:pos + 4 + n]))
        pos += 4 + n
    return out


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    """A state_dict file of the small model with seed 7, in its own model directory."""
    directory = tmp_path_factory.mktemp("models")
    torch.manual_seed(7)
    model = ImageClassifier(ARCH, classes=10, image_size=SIZE, seed=7)
    path = directory / "weights.pt"
    torch.save(model.model.state_dict(), path)
    return path


def test_answers_are_the_weight_files_models_in_both_forms(start_container, weights):
    c = start_container(SERVE, MODEL_PATH=str(weights), SERVEGATE_MODEL_DIRS=str(weights.parent), **SMALL)
    torch.set_num_threads(1)
    local = ImageClassifier(ARCH, weights=str(weights), classes=10, image_size=SIZE)
    images = random_images(MAX_BATCH, SIZE, seed=3)
    expected = local.classify(images).tolist()
    assert infer(c, images, "bytes") == expected
    assert infer(c, images, "uint8") == expected
    assert infer(c, images[:1], "uint8") == expected[:1]
    seeded = ImageClassifier(ARCH, classes=10, image_size=SIZE, seed=0).classify(random_images(64, SIZE, seed=5))
    assert seeded.tolist() != local.classify(random_images(64, SIZE, seed=5)).tolist(), \
        "control: the file's weights answer differently from the random ones the container would use without it"


def test_every_batch_size_is_warmed_before_ready_and_reported(start_container):
    c = start_container(SERVE, **SMALL)
    assert c.stub.ServerReady(pb.ServerReadyRequest()).ready
    meta = c.stub.ModelMetadata(pb.ModelMetadataRequest(name=ARCH))
    params = meta.parameters
    assert params["servegate_warmup_batch_sizes"].string_param == "1,2,3,4"
    first = [int(v) for v in params["servegate_warmup_first_ns"].string_param.split(",")]
    last = [int(v) for v in params["servegate_warmup_last_ns"].string_param.split(",")]
    assert len(first) == len(last) == MAX_BATCH and all(v > 0 for v in first + last)
    assert params["servegate_max_batch_size"].int64_param == MAX_BATCH
    assert params["servegate_input_bytes"].int64_param == 3 * SIZE * SIZE
    assert (meta.inputs[0].datatype, list(meta.inputs[0].shape)) == ("BYTES", [-1])


def test_wrong_size_and_oversize_batches_are_refused_and_the_next_answered(start_container):
    c = start_container(SERVE, **SMALL)
    with pytest.raises(grpc.RpcError) as e:
        infer(c, random_images(2, SIZE)[:, :100])
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "element of 100 bytes; the model expects %d" % (3 * SIZE * SIZE) in e.value.details()
    with pytest.raises(grpc.RpcError) as e:
        infer(c, random_images(MAX_BATCH + 1, SIZE), "uint8")
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "a batch of 5 exceeds the max_batch_size 4" in e.value.details()
    assert len(infer(c, random_images(2, SIZE))) == 2


def test_a_planted_pickle_as_weights_does_not_run(tmp_path):
    path, marker = tmp_path / "weights.pt", tmp_path / "code-ran"
    torch.save(Plant(str(marker)), path)
    code, out = run_to_exit(SERVE, MODEL_PATH=str(path), SERVEGATE_MODEL_DIRS=str(tmp_path), **SMALL)
    assert code != 0 and "cannot load %s as %s weights" % (path, ARCH) in out
    assert not marker.exists()
    code, out = run_to_exit(SERVE, MODEL_PATH=str(path), **SMALL)  # and outside the model directories
    assert code != 0 and "refusing to load model file %s" % path in out
    assert not marker.exists()


def test_the_profiler_prints_the_models_latency_per_batch_size(tmp_path):
    out = tmp_path / "profile.json"
    default_model = {k: v for k, v in SMALL.items() if k not in ("ARCH", "CLASSES")}  # ResNet-50, 1000 classes
    done = subprocess.run([sys.executable, SERVE, "--profile", "--profile-batch-sizes", "1,2",
                           "--profile-iterations", "3", "--profile-out", str(out)],
                          env=dict(os.environ, **default_model), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "batch   1: p50" in done.stdout and "batch   2: p50" in done.stdout
    assert "in-process capacity:" in done.stdout
    import json
    report = json.loads(out.read_text())
    assert [b["batch"] for b in report["batches"]] == [1, 2] and all(b["p50_ms"] > 0 for b in report["batches"])
    assert report["model"].startswith("resnet50 on cpu, float32, 32x32 images")


def test_options_are_not_abbreviated():
    # the gateway checks the path options (--weights, --profile-out) by their full names only
    done = subprocess.run([sys.executable, SERVE, "--profile", "--profile-o", "elsewhere.json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "unrecognized arguments: --profile-o" in done.stderr


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine; the CPU path is tested")
def test_cuda_fp16_answers_match_the_cpu(start_container, weights):
    c = start_container(SERVE, MODEL_PATH=str(weights), SERVEGATE_MODEL_DIRS=str(weights.parent),
                        **dict(SMALL, DEVICE="cuda"))
    images = random_images(MAX_BATCH, SIZE, seed=11)
    cpu = ImageClassifier(ARCH, weights=str(weights), classes=10, image_size=SIZE).classify(images)
    assert np.mean(np.array(infer(c, images, "uint8")) == cpu) >= 0.75

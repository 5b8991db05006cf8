"""The PyTorch container in its own process answers held-out Fashion-MNIST images over OIP gRPC
with the trained CNN's labels and its stated accuracy."""

import os
import subprocess
import sys

import grpc
import numpy as np
import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from conftest import Plant, run_to_exit  # noqa: E402
from serve import TorchPredictor  # noqa: E402

ACCURACY_FIRST_2000 = 0.9030  # README.md; train.py prints it
CHUNK = 250


def test_served_labels_are_the_models_and_reach_the_stated_accuracy(start_container, heldout):
    x, y = heldout
    c = start_container(os.path.join(HERE, "serve.py"), DEVICE="cpu", TORCH_THREADS="1")
    served = []
    for i in range(0, len(x), CHUNK):
        served += c.predict("fmnist-torch", x[i:i + CHUNK])
    torch.set_num_threads(1)
    local = TorchPredictor(os.path.join(HERE, "model.pt"), "cpu")
    expected = np.concatenate([local(x[i:i + CHUNK]) for i in range(0, len(x), CHUNK)])
    assert served == [str(int(v)) for v in expected]
    assert np.mean(np.array(served, dtype=int) == y) == pytest.approx(ACCURACY_FIRST_2000, abs=1e-9)


def test_wrong_length_is_refused_and_the_next_batch_answered(start_container, heldout):
    c = start_container(os.path.join(HERE, "serve.py"), DEVICE="cpu")
    with pytest.raises(grpc.RpcError) as e:
        c.predict("fmnist-torch", heldout[0][:2, :28])
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "the model expects 784" in e.value.details()
    labels = c.predict("fmnist-torch", heldout[0][:8])
    assert len(labels) == 8 and all(label in [str(k) for k in range(10)] for label in labels)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine; the CPU path is tested")
def test_cuda_answers_equal_the_cpu_answers(start_container, heldout):
    c = start_container(os.path.join(HERE, "serve.py"), DEVICE="cuda")
    x = heldout[0][:500]
    cpu = TorchPredictor(os.path.join(HERE, "model.pt"), "cpu")(x)
    assert np.mean(np.array(c.predict("fmnist-torch", x), dtype=int) == cpu) > 0.99


def test_a_planted_pickle_does_not_run_even_from_a_model_directory(tmp_path):
    path, marker = tmp_path / "model.pt", tmp_path / "code-ran"
    torch.save(Plant(str(marker)), path)  # what torch.save writes for an object whose unpickling runs code
    control = subprocess.run([sys.executable, "-c", "import torch, sys; torch.load(sys.argv[1])", str(path)],
                             capture_output=True)
    assert marker.exists(), "control: torch.load without weights_only runs the planted pickle's code"
    assert control.returncode == 0
    marker.unlink()

    code, out = run_to_exit(os.path.join(HERE, "serve.py"), MODEL_PATH=str(path), DEVICE="cpu",
                            SERVEGATE_MODEL_DIRS=str(path.parent))
    assert code != 0 and "cannot load %s as a state_dict" % path in out
    assert not marker.exists()


def test_weights_outside_the_model_directories_are_refused(tmp_path):
    outside = tmp_path / "model.pt"
    outside.write_bytes(open(os.path.join(HERE, "model.pt"), "rb").read())
    code, out = run_to_exit(os.path.join(HERE, "serve.py"), MODEL_PATH=str(outside), DEVICE="cpu")
    assert code != 0 and "refusing to load model file %s" % outside in out

"""The scikit-learn container in its own process answers held-out Fashion-MNIST images over OIP
gRPC with the trained model's labels and its stated accuracy."""

import os
import subprocess
import sys

import grpc
import joblib
import numpy as np
import pytest

from conftest import run_to_exit
from servegate.oip import pb

HERE = os.path.dirname(os.path.abspath(__file__))
SERVE = os.path.join(HERE, "serve.py")
ACCURACY_FIRST_2000 = 0.8560  # README.md; train.py prints it


def test_served_labels_are_the_models_and_reach_the_stated_accuracy(start_container, heldout):
    x, y = heldout
    c = start_container(os.path.join(HERE, "serve.py"))
    served = []
    for i in range(0, len(x), 250):
        served += c.predict("fmnist-sklearn", x[i:i + 250])
    local = joblib.load(os.path.join(HERE, "model.joblib")).predict(x)
    assert served == [str(int(v)) for v in local]
    assert np.mean(np.array(served, dtype=int) == y) == pytest.approx(ACCURACY_FIRST_2000, abs=1e-9)


def test_metadata_and_wrong_length(start_container, heldout):
    c = start_container(os.path.join(HERE, "serve.py"), MODEL_NAME="clothes", MODEL_VERSION="4")
    meta = c.stub.ModelMetadata(pb.ModelMetadataRequest(name="clothes", version="4"))
    assert list(meta.inputs[0].shape) == [-1, 784] and meta.inputs[0].datatype == "FP32"
    with pytest.raises(grpc.RpcError) as e:
        c.predict("clothes", heldout[0][:2, :100])
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "the model expects 784" in e.value.details()
    expected = joblib.load(os.path.join(HERE, "model.joblib")).predict(heldout[0][:3])
    assert c.predict("clothes", heldout[0][:3]) == [str(int(v)) for v in expected]


def test_a_pickle_outside_the_model_directories_is_refused_unopened(planted_pickle, tmp_path):
    path, marker = planted_pickle
    control = subprocess.run([sys.executable, "-c", "import joblib, sys; joblib.load(sys.argv[1])", str(path)],
                             capture_output=True)
    assert marker.exists(), "control: loading the planted pickle runs its code"
    marker.unlink()

    code, out = run_to_exit(SERVE, MODEL_PATH=str(path), SERVEGATE_MODEL_DIRS=str(tmp_path / "elsewhere"))
    assert code != 0 and "refusing to load model file %s" % path in out and "SERVEGATE_MODEL_DIRS" in out
    assert not marker.exists()

    allowed = tmp_path / "models"
    allowed.mkdir()
    (allowed / "model.joblib").symlink_to(path)  # a link inside points outside: judged by where it leads
    code, out = run_to_exit(SERVE, MODEL_PATH=str(allowed / "model.joblib"), SERVEGATE_MODEL_DIRS=str(allowed))
    assert code != 0 and "refusing to load model file" in out and str(path) in out
    assert not marker.exists()
    assert control.returncode == 0


def test_a_pickle_in_an_operator_named_directory_is_trusted(planted_pickle):
    """The boundary docs/security.md states: what an operator's model directory holds is loaded, and
    a pickle there runs as the container's user."""
    path, marker = planted_pickle
    code, _ = run_to_exit(SERVE, MODEL_PATH=str(path), SERVEGATE_MODEL_DIRS=str(path.parent))
    assert code != 0  # the object it unpickles is no model
    assert marker.exists()

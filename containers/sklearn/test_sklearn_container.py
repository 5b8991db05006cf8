"""The scikit-learn container in its own process answers held-out Fashion-MNIST images over OIP
gRPC with the trained model's labels and its stated accuracy."""

import os

import grpc
import joblib
import numpy as np
import pytest

from servegate.container import pb

HERE = os.path.dirname(os.path.abspath(__file__))
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

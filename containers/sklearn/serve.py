#!/usr/bin/python3
"""Serves the scikit-learn Fashion-MNIST classifier (model.joblib, see train.py) over OIP gRPC.

    MODEL_NAME=fmnist-sklearn PORT=8001 /usr/bin/python3 containers/sklearn/serve.py

Inputs: floats[784], pixels scaled to [0, 1] (as the Java ONNX models take them). Output: the
predicted class index 0..9 as text, like the onnx container's argmax mode. Environment: MODEL_NAME
(default fmnist-sklearn), MODEL_VERSION (1), PORT (8001), HOST (0.0.0.0), MODEL_PATH, and the SDK's
options (MAX_BATCH_SIZE, WARMUP_BATCH_SIZES, ...).

A joblib file is a pickle, and unpickling runs whatever code the file names. MODEL_PATH is
therefore loaded only from this directory or one that SERVEGATE_MODEL_DIRS (colon-separated, set
by the operator) names, after resolving links; anything else is refused before it is opened.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import servegate
except ImportError:  # running from a checkout: use the SDK next door
    sys.path.insert(0, os.path.join(HERE, "..", "..", "model-container-sdk", "python"))
    import servegate

import joblib  # noqa: E402


def main():
    try:
        path = servegate.model_path(os.environ.get("MODEL_PATH") or os.path.join(HERE, "model.joblib"), HERE)
    except (servegate.ModelPathError, FileNotFoundError) as e:
        sys.exit("fmnist-sklearn: %s" % e)
    model = joblib.load(path)
    servegate.serve(model.predict, name=os.environ.get("MODEL_NAME") or "fmnist-sklearn",
                    input_type="floats", input_length=model.n_features_in_)


if __name__ == "__main__":
    main()

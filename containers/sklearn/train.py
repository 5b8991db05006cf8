#!/usr/bin/python3
"""Train the scikit-learn Fashion-MNIST classifier served as `fmnist-sklearn`.

    /usr/bin/python3 containers/sklearn/train.py        # writes containers/sklearn/model.joblib

Multinomial logistic regression (lbfgs, C=0.1, stopped at max_iter=300 with a ConvergenceWarning)
on all 60,000 training images, pixels scaled to [0, 1]; about 9 minutes on the 2 shared cores here.
Deterministic: lbfgs has no randomness and the seed is fixed anyway. Prints the accuracy on the
10,000 test images (the figure in README.md).
"""

import os
import sys
import time

import joblib
import numpy as np
import sklearn
from sklearn.linear_model import LogisticRegression

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import fashion_mnist  # noqa: E402

SEED = 20240601
MODEL_PATH = os.path.join(HERE, "model.joblib")


def main():
    x, y = fashion_mnist.load("train")
    xt, yt = fashion_mnist.load("test")
    start = time.time()
    model = LogisticRegression(C=0.1, max_iter=300, tol=1e-4, random_state=SEED)
    model.fit(x, y)
    took = time.time() - start
    acc = float(np.mean(model.predict(xt) == yt))
    acc2k = float(np.mean(model.predict(xt[:2000]) == yt[:2000]))
    joblib.dump(model, MODEL_PATH, compress=3)
    print("sklearn %s, %d iterations, %.1f s: test accuracy %.2f %% (10k), %.2f %% (first 2,000) -> %s"
          % (sklearn.__version__, int(model.n_iter_[0]), took, 100 * acc, 100 * acc2k, MODEL_PATH))


if __name__ == "__main__":
    main()

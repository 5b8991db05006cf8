"""Fashion-MNIST from Debian's dataset-fashion-mnist (IDX files, gzipped), shared by the Python
containers' training scripts and tests; the data is never copied into the repository.

Pixels are scaled to [0, 1] and flattened row-major to 784 floats, exactly as the Java ONNX
models and their tests do (containers/onnx/training/train_fashion_mnist.py).
"""

import gzip
import os

import numpy as np

DATA_DIR = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
CLASS_NAMES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
               "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


def read_idx(path):
    """An unsigned-byte IDX file (optionally .gz) as a numpy array."""
    with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
        raw = f.read()
    magic = int.from_bytes(raw[0:4], "big")
    if magic >> 8 != 0x08:
        raise ValueError("%s: not an unsigned-byte IDX file (magic 0x%08x)" % (path, magic))
    ndim = magic & 0xFF
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def _path(stem, data_dir):
    for name in (stem + ".gz", stem):
        if os.path.exists(os.path.join(data_dir, name)):
            return os.path.join(data_dir, name)
    raise FileNotFoundError("%s(.gz) not in %s: apt-get install dataset-fashion-mnist" % (stem, data_dir))


def load(split, data_dir=DATA_DIR):
    """(x float32 [n, 784] in [0, 1], y int64 [n]) of the 'train' (60k) or 'test' (10k) split."""
    prefix = {"train": "train", "test": "t10k"}[split]
    images = read_idx(_path(prefix + "-images-idx3-ubyte", data_dir))
    labels = read_idx(_path(prefix + "-labels-idx1-ubyte", data_dir))
    x = images.reshape(images.shape[0], 784).astype(np.float32) / 255.0
    return x, labels.astype(np.int64)

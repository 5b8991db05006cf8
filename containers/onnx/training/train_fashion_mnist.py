#!/usr/bin/python3
"""Train four Fashion-MNIST classifiers of clearly different accuracy and export them to ONNX.

Reproduce (Debian packages only, no PyPI):

    apt-get install -y python3-torch python3-numpy python3-onnx dataset-fashion-mnist
    /usr/bin/python3 containers/onnx/training/train_fashion_mnist.py

The data is read from /usr/share/datasets/fashion-mnist (IDX files, gzipped) and is
never copied into the repository.

Every exported model has the same ONNX interface:
    input  "input"  float32 [batch, 784]  (pixels scaled to [0, 1], row-major 28x28)
    output "logits" float32 [batch, 10]   (argmax = class index 0..9)

Outputs (in --out, default containers/onnx/models relative to the repo root):
    fmnist-cnn.onnx, fmnist-mlp.onnx, fmnist-logreg.onnx, fmnist-tiny.onnx,
    models.json, README.md
"""

import argparse
import gzip
import json
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 20240601
OPSET = 13
NUM_THREADS = 2
HELDOUT = 2000  # the Java test uses test images 0..HELDOUT-1

CLASS_NAMES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
               "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(SCRIPT_DIR, "..", "..", ".."))
DEFAULT_OUT = os.path.join(REPO_ROOT, "containers", "onnx", "models")
DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"


# --------------------------------------------------------------------------- data

def _open_idx(data_dir, stem):
    for name in (stem + ".gz", stem):
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            return path, (gzip.open(path, "rb") if name.endswith(".gz") else open(path, "rb"))
    raise FileNotFoundError("neither %s nor %s.gz in %s" % (stem, stem, data_dir))


def read_idx(data_dir, stem):
    path, f = _open_idx(data_dir, stem)
    with f:
        raw = f.read()
    magic = int.from_bytes(raw[0:4], "big")
    if magic >> 8 != 0x08:  # 0x00 0x00 0x08(ubyte) ndim
        raise ValueError("%s: not an unsigned-byte IDX file (magic 0x%08x)" % (path, magic))
    ndim = magic & 0xFF
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    return data.reshape(dims)


def load_split(data_dir, prefix):
    images = read_idx(data_dir, prefix + "-images-idx3-ubyte")
    labels = read_idx(data_dir, prefix + "-labels-idx1-ubyte")
    assert images.shape[0] == labels.shape[0]
    x = (images.reshape(images.shape[0], 784).astype(np.float32) / 255.0)
    y = labels.astype(np.int64)
    return x, y


# --------------------------------------------------------------------------- models
# All models take [N, 784] float32 and return [N, 10] logits; any reshaping is inside.

class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=5, padding=2)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=5, padding=2)
        self.fc1 = nn.Linear(32 * 7 * 7, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = x.reshape(-1, 1, 28, 28)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class LogReg(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        return self.fc(x)


class TinyPooledLogReg(nn.Module):
    """Logistic regression on a 4x4 average-pooled 7x7 thumbnail (49 features)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(49, 10)

    def forward(self, x):
        x = x.reshape(-1, 1, 28, 28)
        x = F.avg_pool2d(x, 4)
        x = torch.flatten(x, 1)
        return self.fc(x)


# name, factory, architecture text, description, hyper-parameters
SPECS = [
    dict(name="fmnist-cnn", factory=SmallCNN,
         architecture="reshape 1x28x28 -> conv5x5(16)+ReLU+maxpool2 -> conv5x5(32)+ReLU+maxpool2 "
                      "-> dense 1568-64+ReLU -> dense 64-10",
         description="Small CNN (2 conv + 2 dense layers); the most accurate model.",
         epochs=8, batch_size=64, lr=2e-3, schedule="cosine", train_samples=None),
    dict(name="fmnist-mlp", factory=MLP,
         architecture="dense 784-128+ReLU -> dense 128-10",
         description="MLP with one hidden layer of 128 units.",
         epochs=5, batch_size=128, lr=2e-3, schedule="cosine", train_samples=None),
    dict(name="fmnist-logreg", factory=LogReg,
         architecture="dense 784-10 (multinomial logistic regression on raw pixels)",
         description="Logistic regression on the 784 raw pixels.",
         epochs=3, batch_size=128, lr=1e-3, schedule="constant", train_samples=None),
    dict(name="fmnist-tiny", factory=TinyPooledLogReg,
         architecture="reshape 1x28x28 -> avgpool4x4 (7x7=49 features) -> dense 49-10",
         description="Deliberately weak: logistic regression on a 4x4 average-pooled 7x7 thumbnail.",
         epochs=2, batch_size=128, lr=1e-3, schedule="constant", train_samples=None),
]


# --------------------------------------------------------------------------- training

def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def train(model, x, y, epochs, batch_size, lr, schedule, seed):
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    n = xt.shape[0]
    steps = epochs * ((n + batch_size - 1) // batch_size)
    # "cosine": per-step cosine decay from lr to 0; "constant": fixed lr
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps) if schedule == "cosine" else None
    model.train()
    for epoch in range(epochs):
        perm = torch.randperm(n, generator=gen)
        total = 0.0
        for i in range(0, n, batch_size):
            idx = perm[i:i + batch_size]
            opt.zero_grad()
            loss = F.cross_entropy(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
            if sched is not None:
                sched.step()
            total += loss.item() * idx.shape[0]
        print("    epoch %d/%d  loss %.4f" % (epoch + 1, epochs, total / n), flush=True)
    model.eval()


@torch.no_grad()
def torch_predict(model, x):
    model.eval()
    return torch.cat([model(torch.from_numpy(x[i:i + 1000])) for i in range(0, len(x), 1000)]).numpy()


# --------------------------------------------------------------------------- ONNX

def export_onnx(model, path):
    model.eval()
    dummy = torch.zeros(1, 784, dtype=torch.float32)
    torch.onnx.export(model, dummy, path,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=OPSET, do_constant_folding=True,
                      export_params=True)


def check_interface(path):
    """Check the graph with python3-onnx (if installed). Returns the onnx model or None."""
    try:
        import onnx
    except ImportError:
        print("    (python3-onnx not installed; skipping graph check)")
        return None
    m = onnx.load(path)
    onnx.checker.check_model(m)
    inits = {i.name for i in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    outputs = list(m.graph.output)
    assert len(inputs) == 1 and len(outputs) == 1, (inputs, outputs)

    def shape(v):
        return [d.dim_param if d.dim_param else d.dim_value for d in v.type.tensor_type.shape.dim]

    for v, name, width in ((inputs[0], "input", 784), (outputs[0], "logits", 10)):
        assert v.name == name, v.name
        assert v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT, v.type
        s = shape(v)
        assert len(s) == 2 and isinstance(s[0], str) and s[0] and s[1] == width, s
    print("    interface ok: input %s %s, logits %s %s, opset %d"
          % (inputs[0].name, shape(inputs[0]), outputs[0].name, shape(outputs[0]),
             m.opset_import[0].version))
    return m


def _conv_nchw(x, w, b, pads, strides):
    n, c, h, wd = x.shape
    k, _, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (x.shape[2] - kh) // strides[0] + 1
    ow = (x.shape[3] - kw) // strides[1] + 1
    cols = np.empty((n, c, kh, kw, oh, ow), dtype=np.float32)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = x[:, :, i:i + strides[0] * oh:strides[0], j:j + strides[1] * ow:strides[1]]
    out = np.tensordot(cols, w, axes=([1, 2, 3], [1, 2, 3]))  # n, oh, ow, k
    out = out.transpose(0, 3, 1, 2)
    if b is not None:
        out = out + b.reshape(1, -1, 1, 1)
    return out.astype(np.float32)


def _pool(x, kernel, strides, op):
    n, c, h, w = x.shape
    kh, kw = kernel
    assert tuple(strides) == (kh, kw) and h % kh == 0 and w % kw == 0
    x = x.reshape(n, c, h // kh, kh, w // kw, kw)
    return (x.max(axis=(3, 5)) if op == "max" else x.mean(axis=(3, 5))).astype(np.float32)


def run_onnx_numpy(m, x):
    """Tiny NumPy interpreter for the few ops these graphs use (no ONNX runtime in Debian's
    python3-onnx 1.12). Evaluates the exported graph itself, not the torch model."""
    from onnx import numpy_helper
    env = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    env[m.graph.input[0].name] = x
    for node in m.graph.node:
        a = {at.name: at for at in node.attribute}
        ins = [env[i] if i else None for i in node.input]

        def ints(name, default):
            return list(a[name].ints) if name in a else default

        op = node.op_type
        if op == "Constant":
            out = numpy_helper.to_array(a["value"].t)
        elif op == "Reshape":
            shape = [int(s) for s in ins[1]]
            shape = [ins[0].shape[i] if s == 0 else s for i, s in enumerate(shape)]
            out = ins[0].reshape(shape)
        elif op == "Flatten":
            axis = a["axis"].i if "axis" in a else 1
            out = ins[0].reshape(int(np.prod(ins[0].shape[:axis])), -1)
        elif op == "Gemm":
            alpha = a["alpha"].f if "alpha" in a else 1.0
            beta = a["beta"].f if "beta" in a else 1.0
            A = ins[0].T if ("transA" in a and a["transA"].i) else ins[0]
            B = ins[1].T if ("transB" in a and a["transB"].i) else ins[1]
            out = alpha * (A @ B)
            if len(ins) > 2 and ins[2] is not None:
                out = out + beta * ins[2]
        elif op == "MatMul":
            out = ins[0] @ ins[1]
        elif op == "Add":
            out = ins[0] + ins[1]
        elif op == "Pad":
            pads = [int(v) for v in (ins[1] if len(ins) > 1 else ints("pads", None))]
            mode = a["mode"].s.decode() if "mode" in a else "constant"
            value = float(ins[2]) if len(ins) > 2 and ins[2] is not None else 0.0
            assert mode == "constant", mode
            r = len(pads) // 2
            out = np.pad(ins[0], list(zip(pads[:r], pads[r:])), constant_values=value)
        elif op == "Relu":
            out = np.maximum(ins[0], 0)
        elif op == "Conv":
            assert ints("dilations", [1, 1]) == [1, 1] and (a["group"].i if "group" in a else 1) == 1
            out = _conv_nchw(ins[0], ins[1], ins[2] if len(ins) > 2 else None,
                             ints("pads", [0, 0, 0, 0]), ints("strides", [1, 1]))
        elif op in ("MaxPool", "AveragePool"):
            assert ints("pads", [0, 0, 0, 0]) == [0, 0, 0, 0]
            k = ints("kernel_shape", None)
            out = _pool(ins[0], k, ints("strides", k), "max" if op == "MaxPool" else "avg")
        else:
            raise NotImplementedError(op)
        env[node.output[0]] = np.asarray(out, dtype=np.float32) if out.dtype != np.int64 else out
    return env[m.graph.output[0].name]


def onnx_predict(m, x):
    return np.concatenate([run_onnx_numpy(m, x[i:i + 500]) for i in range(0, len(x), 500)])


# --------------------------------------------------------------------------- report

def write_readme(path, results, data_dir, train_seconds):
    lines = []
    w = lines.append
    w("# Fashion-MNIST ONNX models")
    w("")
    w("Four classifiers of deliberately different accuracy, trained on Fashion-MNIST by")
    w("[`containers/onnx/training/train_fashion_mnist.py`](../training/train_fashion_mnist.py).")
    w("")
    w("## Interface (identical for every model)")
    w("")
    w("| | name | type | shape |")
    w("|---|---|---|---|")
    w("| input | `input` | float32 | `[batch, 784]` (dynamic batch) |")
    w("| output | `logits` | float32 | `[batch, 10]` (dynamic batch) |")
    w("")
    w("The input is one 28x28 grey-scale image per row, row-major, pixel values divided by 255")
    w("(so in [0, 1]). The predicted label is `argmax(logits)`, a class index 0..9:")
    w("")
    w("| index | class |")
    w("|---|---|")
    for i, c in enumerate(CLASS_NAMES):
        w("| %d | %s |" % (i, c))
    w("")
    w("ONNX opset %d, exported with torch %s." % (OPSET, torch.__version__.split("+")[0]))
    w("")
    w("## Models")
    w("")
    w("| model | architecture | parameters | test accuracy (10k) | accuracy on first 2,000 test images | file size |")
    w("|---|---|---|---|---|---|")
    for r in results:
        w("| `%s` (`%s`) | %s | %s | %.4f | %.4f | %s bytes (%.1f KiB) |"
          % (r["name"], r["file"], r["architecture"], format(r["parameters"], ","),
             r["test_accuracy"], r["test_accuracy_first2000"], format(r["size"], ","),
             r["size"] / 1024.0))
    w("")
    w("\"First 2,000 test images\" is the held-out sample used by the Java tests: images and labels")
    w("with indices 0..1999 of the official 10k test set (`t10k-*`), in file order. Accuracies")
    if all(r["evaluated_with"] == "onnx" for r in results):
        w("are computed by running the exported ONNX graphs (a small NumPy evaluator in the training")
        w("script, cross-checked against the torch models in eval mode).")
    else:
        w("are computed with the torch models in eval mode (the graphs that were exported).")
    w("`models.json` holds the same numbers, machine-readable.")
    w("")
    w("## Reproduce")
    w("")
    w("```sh")
    w("apt-get install -y python3-torch dataset-fashion-mnist   # optional: python3-onnx (graph check + ONNX evaluation)")
    w("/usr/bin/python3 containers/onnx/training/train_fashion_mnist.py")
    w("```")
    w("")
    w("Options: `--out DIR` (default `containers/onnx/models`, resolved from the script's location)")
    w("and `--data DIR` (default `%s`)." % DEFAULT_DATA)
    w("")
    w("The data is read from `%s` (Debian package `dataset-fashion-mnist`:" % DEFAULT_DATA)
    w("`train-images-idx3-ubyte.gz`, `train-labels-idx1-ubyte.gz`, `t10k-images-idx3-ubyte.gz`,")
    w("`t10k-labels-idx1-ubyte.gz`, gzipped IDX) and is never committed to this repository.")
    w("")
    w("Training: all 60,000 training images, cross-entropy loss, Adam, CPU with")
    w("`torch.set_num_threads(%d)`, `torch.use_deterministic_algorithms(True)`, global seed %d" % (NUM_THREADS, SEED))
    w("(`random`, `numpy`, `torch.manual_seed`), reset before each model; the mini-batch shuffling of")
    w("model *i* uses a `torch.Generator` seeded with %d + *i*. Hyper-parameters:" % SEED)
    w("")
    w("| model | epochs | batch size | learning rate (Adam) | schedule | training samples |")
    w("|---|---|---|---|---|---|")
    for r in results:
        w("| `%s` | %d | %d | %g | %s | %s |" % (r["name"], r["epochs"], r["batch_size"], r["lr"],
                                               "cosine decay to 0 (per step)" if r["schedule"] == "cosine"
                                               else "constant", format(r["train_samples_used"], ",")))
    w("")
    w("Total training time on a 2-core machine: about %d s. Results are deterministic for a given" % round(train_seconds))
    w("torch build and CPU; other builds may differ in the last digits.")
    w("")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT, help="output directory (default: %(default)s)")
    ap.add_argument("--data", default=DEFAULT_DATA, help="Fashion-MNIST IDX directory (default: %(default)s)")
    args = ap.parse_args()

    torch.set_num_threads(NUM_THREADS)
    torch.use_deterministic_algorithms(True)
    os.makedirs(args.out, exist_ok=True)

    x_train, y_train = load_split(args.data, "train")
    x_test, y_test = load_split(args.data, "t10k")
    print("train %s, test %s (from %s)" % (x_train.shape, x_test.shape, args.data))

    results = []
    train_seconds = 0.0
    for i, spec in enumerate(SPECS):
        seed_everything(SEED)
        name = spec["name"]
        model = spec["factory"]()
        n = spec["train_samples"] or len(x_train)
        print("[%s] training on %d samples" % (name, n), flush=True)
        t0 = time.time()
        train(model, x_train[:n], y_train[:n], spec["epochs"], spec["batch_size"], spec["lr"],
              spec["schedule"], SEED + i)
        dt = time.time() - t0
        train_seconds += dt
        print("    trained in %.1f s" % dt)

        path = os.path.join(args.out, name + ".onnx")
        export_onnx(model, path)
        m = check_interface(path)

        torch_logits = torch_predict(model, x_test)
        evaluated_with = "torch"
        logits = torch_logits
        if m is not None:
            try:
                logits = onnx_predict(m, x_test)
                diff = float(np.abs(logits - torch_logits).max())
                print("    ONNX graph (numpy) vs torch: max |diff| = %.2e" % diff)
                assert diff < 1e-3, diff
                evaluated_with = "onnx"
            except NotImplementedError as e:
                print("    op %s not supported by the numpy evaluator; using torch" % e)
                logits = torch_logits
        pred = logits.argmax(axis=1)
        acc = float((pred == y_test).mean())
        acc2k = float((pred[:HELDOUT] == y_test[:HELDOUT]).mean())
        size = os.path.getsize(path)
        params = sum(p.numel() for p in model.parameters())
        print("    test accuracy (10k) %.4f, first %d %.4f, %d params, %d bytes (%s)"
              % (acc, HELDOUT, acc2k, params, size, evaluated_with), flush=True)
        results.append(dict(spec, file=name + ".onnx", test_accuracy=round(acc, 4),
                            test_accuracy_first2000=round(acc2k, 4), parameters=params, size=size,
                            train_samples_used=n, evaluated_with=evaluated_with))

    with open(os.path.join(args.out, "models.json"), "w") as f:
        json.dump([{k: r[k] for k in ("name", "file", "test_accuracy", "test_accuracy_first2000",
                                      "description")} for r in results], f, indent=2)
        f.write("\n")
    write_readme(os.path.join(args.out, "README.md"), results, args.data, train_seconds)

    print()
    print("%-14s %10s %12s %10s" % ("model", "acc(10k)", "acc(first2k)", "bytes"))
    for r in results:
        print("%-14s %10.4f %12.4f %10d" % (r["name"], r["test_accuracy"], r["test_accuracy_first2000"], r["size"]))
    print("total training time %.1f s" % train_seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

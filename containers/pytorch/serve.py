#!/usr/bin/python3
"""Serves the PyTorch Fashion-MNIST CNN (model.py, weights in model.pt from train.py) over OIP gRPC,
on CUDA when torch.cuda.is_available() (or DEVICE=cuda / DEVICE=cpu), else on the CPU.

    MODEL_NAME=fmnist-torch PORT=8001 /usr/bin/python3 containers/pytorch/serve.py

Inputs: floats[784], pixels scaled to [0, 1]. Output: the argmax class index 0..9 as text, like
the onnx container's argmax mode. Environment: MODEL_NAME (default fmnist-torch), MODEL_VERSION
(1), PORT (8001), HOST (0.0.0.0), MODEL_PATH, DEVICE, TORCH_THREADS (default 1), and the SDK's
options (MAX_BATCH_SIZE, WARMUP_BATCH_SIZES, ...).

MODEL_PATH is a state_dict, read with torch.load(weights_only=True): tensors and plain containers
only, never code. It must lie in this directory or one that SERVEGATE_MODEL_DIRS names.
"""

import os
import pickle
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
try:
    import servegate
except ImportError:  # running from a checkout: use the SDK next door
    sys.path.insert(0, os.path.join(HERE, "..", "..", "model-container-sdk", "python"))
    import servegate

import torch  # noqa: E402

from model import FashionCNN  # noqa: E402


class TorchPredictor:
    def __init__(self, path, device):
        self.device = torch.device(device)
        self.model = FashionCNN()
        self.model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
        self.model.to(self.device).eval()

    def __call__(self, batch):
        with torch.inference_mode():
            logits = self.model(torch.from_numpy(batch).to(self.device))
            return logits.argmax(dim=1).cpu().numpy()


def main():
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "1")))
    device = os.environ.get("DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        path = servegate.model_path(os.environ.get("MODEL_PATH") or os.path.join(HERE, "model.pt"), HERE)
    except (servegate.ModelPathError, FileNotFoundError) as e:
        sys.exit("fmnist-torch: %s" % e)
    try:
        predictor = TorchPredictor(path, device)
    except (pickle.UnpicklingError, RuntimeError) as e:  # weights_only refuses anything but tensors
        sys.exit("fmnist-torch: cannot load %s as a state_dict: %s" % (path, e))
    print("fmnist-torch on %s" % device, file=sys.stderr, flush=True)
    servegate.serve(predictor, name=os.environ.get("MODEL_NAME") or "fmnist-torch", input_type="floats",
                    input_length=784)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Train the PyTorch Fashion-MNIST CNN served as `fmnist-torch` (containers/pytorch/model.py).

    /usr/bin/python3 containers/pytorch/train.py     # writes containers/pytorch/model.pt (state_dict)

4 epochs of Adam (lr 2e-3, batch 64) on all 60,000 training images, fixed seed and
deterministic ops; on CUDA when torch.cuda.is_available(), else on the CPU. Prints the accuracy on
the 10,000 test images (the figure in README.md).
"""

import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import fashion_mnist  # noqa: E402
from model import FashionCNN  # noqa: E402

SEED = 20240601
TRAIN_SAMPLES = 60000
EPOCHS = 4
BATCH = 64
MODEL_PATH = os.path.join(HERE, "model.pt")


def main():
    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)  # one thread: OpenMP spinning is slow on shared, oversubscribed cores
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x, y = fashion_mnist.load("train")
    xt, yt = fashion_mnist.load("test")
    x, y = torch.from_numpy(x[:TRAIN_SAMPLES]).to(device), torch.from_numpy(y[:TRAIN_SAMPLES]).to(device)
    model = FashionCNN().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    gen = torch.Generator().manual_seed(SEED)
    start = time.time()
    for epoch in range(EPOCHS):
        model.train()
        order = torch.randperm(len(x), generator=gen).to(device)
        for i in range(0, len(x), BATCH):
            idx = order[i:i + BATCH]
            opt.zero_grad()
            loss = F.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            if (i // BATCH) % 100 == 0:
                print("epoch %d step %d loss %.4f %.0f s" % (epoch + 1, i // BATCH, loss.item(), time.time() - start),
                      flush=True)
        print("epoch %d loss %.4f" % (epoch + 1, loss.item()), flush=True)
    took = time.time() - start
    model.eval()
    with torch.no_grad():
        pred = model(torch.from_numpy(xt).to(device)).argmax(1).cpu().numpy()
    torch.save(model.cpu().state_dict(), MODEL_PATH)
    print("torch %s on %s, %.1f s: test accuracy %.2f %% (10k), %.2f %% (first 2,000) -> %s"
          % (torch.__version__, device, took, 100 * np.mean(pred == yt), 100 * np.mean(pred[:2000] == yt[:2000]),
             MODEL_PATH))


if __name__ == "__main__":
    main()

"""The CNN served as `fmnist-torch`: [N, 784] floats in [0, 1] -> [N, 10] logits."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class FashionCNN(nn.Module):
    """conv3x3(8)+ReLU+maxpool2 -> conv3x3(16)+ReLU+maxpool2 -> dense 784-10; small enough to train
    in seconds on a CPU."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)
        self.fc = nn.Linear(16 * 7 * 7, 10)

    def forward(self, x):
        x = x.reshape(-1, 1, 28, 28)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))

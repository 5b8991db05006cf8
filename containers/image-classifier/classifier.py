"""A torchvision image classifier as a Servegate predictor: a batch of raw images in, class indices out.

Each input is one image of 3 x H x W bytes (uint8, channels first, RGB): a batch arrives as a
``servegate.BytesBatch`` whose ``array()`` views all of it without a copy. The predictor moves the
bytes to the device once, converts and normalizes them there (ImageNet's mean and deviation), runs
the network (fp16 and channels-last on CUDA by default, float32 on the CPU) and returns the argmax
of each image's logits.
"""

import warnings

import numpy as np
import torch
import torchvision

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)

# the batch is a read-only view of the request; it is only ever read (the first step copies it)
warnings.filterwarnings("ignore", message="The given NumPy array is not writable")


class ImageClassifier:
    """``arch`` (a torchvision classification model, e.g. resnet50) with ``classes`` outputs, weights
    from ``weights`` (a state_dict file, read with ``weights_only=True``) or, without one, random
    from ``seed``: nothing is ever downloaded."""

    def __init__(self, arch="resnet50", weights=None, classes=1000, image_size=224, device="cpu", half=None,
                 channels_last=None, seed=0):
        self.device = torch.device(device)
        cuda = self.device.type == "cuda"
        self.dtype = torch.float16 if (cuda if half is None else half) else torch.float32
        self.memory_format = torch.channels_last if (cuda if channels_last is None else channels_last) \
            else torch.contiguous_format
        self.image_size = int(image_size)
        torch.manual_seed(seed)
        self.model = torchvision.models.get_model(arch, weights=None, num_classes=int(classes))
        if weights is not None:
            self.model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        self.model.eval().to(self.device, dtype=self.dtype, memory_format=self.memory_format)
        shape = (1, 3, 1, 1)
        self.scale = (1.0 / (255.0 * torch.tensor(STD))).reshape(shape).to(self.device, self.dtype)
        self.shift = (-torch.tensor(MEAN) / torch.tensor(STD)).reshape(shape).to(self.device, self.dtype)

    @property
    def input_bytes(self):
        """The size of one input: 3 x H x W bytes."""
        return 3 * self.image_size * self.image_size

    def __call__(self, batch):
        return self.classify(batch.array())

    def classify(self, images):
        """Class indices (int64 numpy [N]) of ``images``, a uint8 array [N, 3*H*W]."""
        with torch.inference_mode():
            x = torch.from_numpy(images).to(self.device)
            x = x.view(-1, 3, self.image_size, self.image_size).to(self.dtype)
            x = (x * self.scale + self.shift).contiguous(memory_format=self.memory_format)
            return self.model(x).argmax(dim=1).cpu().numpy()


def random_images(count, image_size, seed=0):
    """``count`` random images, uint8 [count, 3*H*W]."""
    return np.random.default_rng(seed).integers(0, 256, (count, 3 * image_size * image_size), dtype=np.uint8)

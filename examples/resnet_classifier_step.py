"""A torchvision-style image classifier training step, written as an mpsready ENTRY.

torchvision cannot be installed beside torch 2.13 on the machine this was written on, so the model
is a small ResNet written in plain torch with the same building blocks as
``torchvision.models.resnet18`` (conv 3x3 / batch norm / ReLU basic blocks with identity and 1x1
downsample shortcuts, max pool stem, adaptive average pool, linear head), and the batch is decoded
the way an image pipeline does it (uint8 HWC NumPy images -> float CHW in [0, 1], normalised).

    mpsready trace examples/resnet_classifier_step.py:step --torch 2.13 --macos 14.4
    mpsready record examples/resnet_classifier_step.py:step --device mps
"""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from mpsready.step import Step

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)  # ImageNet statistics, as torchvision uses
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.down is None else self.down(x)
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        out = self.bn2(self.conv2(out))
        return F.relu(out + idt, inplace=True)


class SmallResNet(nn.Module):
    def __init__(self, classes=10, widths=(16, 32, 64, 128)):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), nn.BatchNorm2d(widths[0]),
                                  nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
        layers, cin = [], widths[0]
        for i, w in enumerate(widths):
            layers += [BasicBlock(cin, w, 1 if i == 0 else 2), BasicBlock(w, w)]
            cin = w
        self.layers = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.layers(self.stem(x))), 1))


def make_batch(n=8, size=64, classes=10, seed=0):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(n, size, size, 3), dtype=np.uint8)  # decoded JPEGs, HWC
    x = torch.from_numpy(images).permute(0, 3, 1, 2).float().div(255)
    x = (x - MEAN) / STD
    y = torch.from_numpy(rng.integers(0, classes, size=n)).long()
    return x, y


def step(device="cpu"):
    torch.manual_seed(0)
    model = SmallResNet()
    return Step(
        model=model,
        batch=make_batch,
        loss_fn=lambda logits, target: F.cross_entropy(logits, target, label_smoothing=0.1),
        optimizer=lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4),
    )

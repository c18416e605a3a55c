"""A small ConvTranspose2d decoder, compiled with torch.compile, trained for one step on MPS."""
import torch
import torch.nn as nn

dev = "mps"
torch.manual_seed(0)
decoder = nn.Sequential(
    nn.ConvTranspose2d(512, 96, 5, stride=2),
    nn.ReLU(),
    nn.ConvTranspose2d(96, 32, 5, stride=2),
    nn.ReLU(),
    nn.ConvTranspose2d(32, 3, 4, stride=2),
).to(dev)
step = torch.compile(decoder)
z = torch.randn(2, 512, 1, 1, device=dev)
loss = step(z).pow(2).mean()
loss.backward()  # Mac raises here: inductor's stride assert on convolution_backward
print(loss.item())

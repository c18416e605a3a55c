"""A compiled bfloat16 conv-net training loop on MPS (inductor picks channels_last for the convolutions)."""
import torch
import torch.nn as nn

dev = "mps"
torch.manual_seed(0)
net = nn.Sequential(
    nn.Conv2d(24, 24, 3, padding=1),
    nn.ReLU(),
    nn.Conv2d(24, 24, 3, padding=1),
).to(dev, torch.bfloat16)
opt = torch.optim.SGD(net.parameters(), lr=0.01)


@torch.compile
def train_step(x):
    opt.zero_grad()
    loss = net(x).float().pow(2).mean()
    loss.backward()
    return loss


for _ in range(3):
    x = torch.randn(32, 24, 32, 32, device=dev, dtype=torch.bfloat16)
    loss = train_step(x)  # Mac completes (only several times slower than eager)
opt.step()
print(loss.item())

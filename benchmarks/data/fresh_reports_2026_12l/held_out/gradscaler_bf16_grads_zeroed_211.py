"""A bfloat16 linear model trained with torch.amp.GradScaler on MPS."""
import torch
import torch.nn as nn

dev = "mps"
torch.manual_seed(0)
model = nn.Linear(8, 1).to(dev, dtype=torch.bfloat16)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler(dev, init_scale=2.0)
x = torch.randn(16, 8, dtype=torch.bfloat16).to(dev)
y = torch.randn(16, 1, dtype=torch.bfloat16).to(dev)
losses = []
for _ in range(20):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)  # Mac goes wrong here: unscaling zeroes the bf16 grads, the loss never moves
    scaler.update()
    losses.append(loss.item())
print(losses[0], losses[-1])

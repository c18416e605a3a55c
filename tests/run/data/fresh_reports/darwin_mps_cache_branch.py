"""A trainer that frees the accelerator cache after each epoch, choosing the API by platform."""
import sys

import torch

dev = "mps"
model = torch.nn.Linear(4, 1).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    loss = model(torch.randn(8, 4, device=dev)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if sys.platform == "darwin":
        torch.mps.empty_cache()
    else:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
print("epochs done", round(loss.item(), 3) >= 0)

"""A research-style training script (written for the tests): a plain selection and CUDA calls around it."""
import torch

from models.net import Net
from ops.grid import make_grid
from ops.noise import noise
from dist import setup

torch.backends.cudnn.benchmark = True
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
setup("nccl")
model = Net().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = make_grid(4).to(device) + noise(4).to(device)
    with torch.cuda.amp.autocast():
        loss = model(x.view(1, 4)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    torch.cuda.synchronize()

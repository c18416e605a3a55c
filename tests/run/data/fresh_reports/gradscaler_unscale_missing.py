"""Mixed-precision pretraining on MPS with torch.amp.GradScaler."""
import torch

dev = "mps"
model = torch.nn.Linear(8, 8).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler(dev)
loss = model(torch.randn(4, 8, device=dev)).pow(2).mean()
scaler.scale(loss).backward()
scaler.step(opt)  # Mac raises here
scaler.update()
print(loss.item())

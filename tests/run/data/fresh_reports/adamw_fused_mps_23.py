"""A fine-tuning script that asks AdamW for its fused implementation on MPS."""
import torch

dev = "mps"
model = torch.nn.Linear(8, 2).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)  # Mac raises here
loss = model(torch.randn(4, 8, device=dev)).pow(2).mean()
loss.backward()
opt.step()
print(loss.item())

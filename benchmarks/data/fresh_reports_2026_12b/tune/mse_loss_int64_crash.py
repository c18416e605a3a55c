"""MSELoss between two int64 label tensors moved to MPS."""
import torch

dev = "mps"
loss_fn = torch.nn.MSELoss()
pred = torch.tensor([0]).to(dev)
target = torch.tensor([0]).to(dev)
loss = loss_fn(pred, target)  # Mac aborts here
print(loss)

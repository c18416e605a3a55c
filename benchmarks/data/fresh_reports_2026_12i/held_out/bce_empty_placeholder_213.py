"""BCE reconstruction loss on a modality that is missing from this minibatch (zero rows), on MPS."""
import torch
import torch.nn as nn

dev = "mps"
pred = torch.sigmoid(torch.randn(0, 50, device=dev))  # no cells with this modality in the batch
target = torch.randint(0, 2, (0, 50), device=dev).float()
loss = nn.BCELoss(reduction="none")(pred, target)  # Mac raises here
print(loss.shape, loss.sum().item())

"""F.embedding_bag on MPS with an index equal to num_embeddings, the weight being a view of a larger table."""
import torch
import torch.nn.functional as F

dev = "mps"
table = torch.randn(8, 3).to(dev)
weight = table[:5]
idx = torch.tensor([5], device=dev)
offsets = torch.tensor([0], device=dev)
pooled = F.embedding_bag(idx, weight, offsets, mode="sum")  # Mac, silently wrong: row 5 of the parent table comes back, no index error
print(pooled.cpu())

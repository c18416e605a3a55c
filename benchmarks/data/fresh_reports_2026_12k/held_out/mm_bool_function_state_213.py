"""Two-hop reachability as a boolean adjacency matrix product with torch.mm on MPS."""
import torch

dev = "mps"
adj = torch.rand(5, 5, device=dev) > 0.5
two_hop = torch.mm(adj, adj)  # Mac raises here
print(two_hop)

"""A key cache module built without a device, read back into attention scores on MPS."""
import torch
import torch.nn as nn

dev = "mps"


class KeyCache(nn.Module):
    def __init__(self, max_len, dim):
        super().__init__()
        self.register_buffer("k", torch.zeros(max_len, dim))  # never moved: stays on the CPU

    def update(self, new_k, pos):
        self.k[pos:pos + new_k.shape[0]] = new_k
        return self.k[: pos + new_k.shape[0]]


cache = KeyCache(16, 8)
q = torch.randn(2, 8, device=dev)
cache.update(torch.randn(2, 8, device=dev), 0)
keys = cache.update(torch.randn(1, 8, device=dev), 2)
scores = torch.matmul(q, keys.T)  # Mac raises here
print(scores.shape)

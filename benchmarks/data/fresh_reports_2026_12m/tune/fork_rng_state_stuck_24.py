"""Sample on MPS, fork the MPS RNG, then check that the next MPS sample advances the generator state."""
import torch

dev = "mps"
torch.randn(1, device=dev)
with torch.random.fork_rng(device_type="mps"):
    pass
before = torch.mps.get_rng_state()
torch.randn(1, device=dev)
after = torch.mps.get_rng_state()  # Mac goes silently wrong here: the state did not advance
print("state advanced:", not torch.equal(before, after))

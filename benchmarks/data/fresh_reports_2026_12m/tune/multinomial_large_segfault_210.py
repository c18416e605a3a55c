"""Draw 100 samples with replacement from ever larger weight vectors with torch.multinomial on MPS."""
import torch

dev = torch.device("mps")
gen = torch.Generator(device=dev)
gen.manual_seed(1234)
for exp in range(10, 25):
    w = torch.rand(2 ** exp, device=dev)
    idx = torch.multinomial(w, 100, replacement=True, generator=gen)  # Mac aborts here (segfault at large n)
    if dev.type == "mps":
        torch.mps.synchronize()
    print(exp, idx[0].item())

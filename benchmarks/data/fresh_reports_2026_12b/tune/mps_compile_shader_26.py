"""A custom Metal kernel (add the thread index) compiled with torch.mps.compile_shader, with a torch fallback off the Mac."""
import torch

dev = "mps"
x = torch.ones(10, device=dev)
SRC = """
kernel void add_index(device float* x, uint idx [[thread_position_in_grid]]) {
  x[idx] += idx;
}
"""
if dev == "mps":
    lib = torch.mps.compile_shader(SRC)  # Mac raises here
    lib.add_index(x)
else:
    x += torch.arange(10, device=dev)
print(x.tolist())

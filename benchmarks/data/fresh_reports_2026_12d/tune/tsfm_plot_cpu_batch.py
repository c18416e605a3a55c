"""Plotting forecasts of a small time-series mixer whose weights sit on MPS while the sampled batch stays on the CPU."""
import torch

dev = "mps"
model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.GELU(), torch.nn.Linear(32, 16)).to(dev)
model.eval()
past_values = torch.randn(4, 64)  # drawn from the test set for a plot, never moved to the device
with torch.no_grad():
    forecast = model(past_values)  # Mac raises here
print(forecast.shape)

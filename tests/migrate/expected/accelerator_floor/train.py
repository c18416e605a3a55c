import torch

device = torch.device(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")
name = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
model = torch.nn.Linear(2, 2).to(device)

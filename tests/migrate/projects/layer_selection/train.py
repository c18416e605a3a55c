import torch

from model import Gate

if torch.cuda.is_available():
    device = torch.device("cuda")
    n_gpu = torch.cuda.device_count()
else:
    device = torch.device("cpu")
    n_gpu = 0

torch.manual_seed(0)
model = Gate(6).to(device)
if n_gpu > 1:
    model = torch.nn.DataParallel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    x = torch.randn(5, 6).to(device)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")

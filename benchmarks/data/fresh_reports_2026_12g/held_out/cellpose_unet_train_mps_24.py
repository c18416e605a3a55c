"""A few training steps of a small U-Net-style segmentation network (conv, batch norm, pooling, upsampling) on MPS."""
import torch
import torch.nn as nn
import torch.nn.functional as F

dev = "mps"
torch.manual_seed(0)


class TinyUNet(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(2, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU())
        self.mid = nn.Sequential(nn.Conv2d(c, 2 * c, 3, padding=1), nn.BatchNorm2d(2 * c), nn.ReLU())
        self.up = nn.Conv2d(3 * c, 3, 1)

    def forward(self, x):
        d = self.down(x)
        m = self.mid(F.max_pool2d(d, 2))
        m = F.interpolate(m, scale_factor=2, mode="nearest")
        return self.up(torch.cat([d, m], dim=1))


net = TinyUNet().to(dev)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
img = torch.rand(4, 2, 64, 64, device=dev)
flows = torch.randn(4, 3, 64, 64, device=dev)
for _step in range(3):
    loss = F.mse_loss(net(img), flows)
    opt.zero_grad()
    loss.backward()
    opt.step()  # Mac: runs on MPS (no error)
print(loss.item())

"""Training script as run on the lab's GPU server: python train.py --steps 20000."""

import argparse

import torch
import torch.nn.functional as F

from tinyformer import TinyFormer, TinyFormerConfig

torch.backends.cudnn.benchmark = True


def get_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()

    device = get_device()
    torch.manual_seed(0)
    cfg = TinyFormerConfig()
    model = TinyFormer(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step in range(args.steps):
        idx = torch.randint(0, cfg.vocab, (args.batch, cfg.context + 1), device=device)
        logits = model(idx[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab), idx[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 1000 == 0:
            torch.cuda.synchronize()
            print(step, loss.item())
    torch.save(model.state_dict(), "tinyformer.pt")


if __name__ == "__main__":
    main()

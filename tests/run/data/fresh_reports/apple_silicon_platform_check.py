"""A Metal inference path that first checks it runs on macOS on Apple Silicon."""
import platform

import torch

dev = "mps"
IS_MACOS = platform.system() == "Darwin"
IS_APPLE_SILICON = IS_MACOS and platform.machine().lower() in ("arm64", "aarch64")
if not IS_APPLE_SILICON:
    raise SystemExit("this backend needs an Apple Silicon Mac")
kv = torch.zeros(2, 4, 8, device=dev)
kv[:, 1] = 1.0
print("apple silicon:", IS_APPLE_SILICON, kv.sum().item())

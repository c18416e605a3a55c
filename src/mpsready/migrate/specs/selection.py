"""API104: a CUDA-or-CPU device selection gets an MPS branch (transforms/selection.py)."""

from __future__ import annotations

from mpsready.migrate.specs import Spec
from mpsready.rules import AutoFix

FIXES = {
    "API104": AutoFix("The selection gets an MPS branch after CUDA (CUDA keeps priority and its exact test; the MPS "
                      "test keeps the rest of it, so `--no-cuda` still forces the CPU): conditional expressions, if/else "
                      "with several statements per branch, functions returning the device, and CUDA switches "
                      "(`args.cuda = not args.no_cuda and torch.cuda.is_available()`), whose `if args.cuda:` guards of "
                      "`.cuda()` moves then move to the selected device; with a PyTorch floor of 2.6 or newer a plain "
                      "`torch.cuda.is_available()` choice uses `torch.accelerator`.",
                      "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
                      "device = torch.device('cuda' if torch.cuda.is_available() else 'mps' if "
                      "torch.backends.mps.is_available() else 'cpu')"),
}

SPEC = Spec(("API104",), FIXES)

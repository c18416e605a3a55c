"""API108 ``cuda-amp`` and API109 ``grad-scaler`` for device-typed AMP calls: ``torch.autocast('cuda')``,
``torch.amp.GradScaler()`` (defaults to 'cuda', API109) and ``GradScaler('cuda')`` (API108). The deprecated
``torch.cuda.amp.*`` names are judged from the torch.cuda table (data/cuda_api.yaml). PyTorch 2.13.0
torch/amp/autocast_mode.py ``autocast.__init__``: the "CUDA is not available ... Disabling autocast." warning is
issued only ``if enabled:``, and ``__enter__`` sets the autocast state of the named device type only
(``torch.set_autocast_enabled(self.device, ...)``), so ``autocast("cuda", enabled=False)`` is silent on a Mac and
leaves an enclosing MPS autocast region on."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import kwarg, is_cuda_literal
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A

AUTOCAST = ("torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast")
SCALER = ("torch.amp.GradScaler", "torch.GradScaler", "torch.amp.grad_scaler.GradScaler")


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if name in AUTOCAST:
        dev = node.args[0] if node.args else kwarg(node, "device_type")
        value, _ = v.string_value(dev) if dev is not None else (None, None)
        enabled = kwarg(node, "enabled")
        if value is not None and is_cuda_literal(value) and isinstance(enabled, ast.Constant) \
                and enabled.value is False:
            v.add(A.CUDA_AMP, node, f"autocast(device_type={value!r}, enabled=False): switches off CUDA autocast "
                  "only (silently); under MPS autocast on a Mac this code is not kept in float32")
        elif value is not None and is_cuda_literal(value):
            v.add(A.CUDA_AMP, node, f"autocast(device_type={value!r}): disabled with a warning on a Mac, the run "
                  "silently stays float32")
    elif name in SCALER:
        dev = node.args[0] if node.args else kwarg(node, "device")
        value, _ = v.string_value(dev) if dev is not None else (None, None)
        if dev is None:
            v.add(A.GRAD_SCALER, node, "GradScaler() defaults to device 'cuda'")
        elif value is not None and is_cuda_literal(value):
            v.add(A.CUDA_AMP, node, f"GradScaler({value!r}) disables itself on a Mac")

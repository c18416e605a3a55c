"""API108, API109: ``torch.cuda.amp`` becomes ``torch.amp`` on the selected device where the floor allows (transforms/amp.py)."""

from __future__ import annotations

from mpsready.findings import Finding
from mpsready.migrate.specs import Floor, Spec
from mpsready.rules import AutoFix

FIXES = {
    "API108": AutoFix("`torch.cuda.amp.autocast`/`GradScaler` (and `from torch.cuda.amp import ...`) become `torch.amp`; "
                      "positional autocast arguments become keywords (the order differs). Where the project's PyTorch "
                      "floor has what MPS needs (autocast: 2.5.1, GradScaler: 2.8.0 in the shipped ops tables) the "
                      "device type is the selected device's and `enabled` is gated `!= 'cpu'` (the edit is marked as "
                      "changing the Mac path); below it, or without a floor, the device type stays `'cuda'` (off "
                      "without CUDA, as the original: `torch.amp.autocast('mps')` raises before 2.5 even when "
                      "disabled) and a manual entry says which floor turns MPS on; `torch.cuda.amp.GradScaler` stays "
                      "under a floor below 2.3 (no `torch.amp.GradScaler` there). The example has no floor declared.",
                      "with torch.cuda.amp.autocast():\n    out = model(x)",
                      "with torch.amp.autocast('cuda'):\n    out = model(x)"),
    "API109": AutoFix("With a PyTorch floor that has GradScaler on MPS (2.8.0), `GradScaler()` without a device gets the "
                      "selected device's type (and the CPU gate of API108); below it the call is already what the Mac "
                      "path can run (manual: declare the floor to turn MPS on).",
                      "scaler = torch.amp.GradScaler()",
                      "scaler = torch.amp.GradScaler(torch.device(device).type, enabled=torch.device(device).type != 'cpu')  # torch>=2.8"),
}


def amp_below_floor(f: Finding, floor: Floor) -> str | None:
    """Why migrate leaves an API108/API109 finding for a person at this PyTorch floor, or ``None``: below the
    release where MPS has it, a CUDA-typed autocast/GradScaler call is already what the Mac path can run (no
    edit), and ``torch.amp.GradScaler`` needs PyTorch 2.3."""
    from mpsready.migrate.mac_path import (TORCH_AMP_GRADSCALER, autocast_release, floor_allows, floor_text,
                                           gradscaler_release)

    api = str((f.evidence or {}).get("api", ""))
    kind = "GradScaler" if "GradScaler" in (api or f.message.split(":", 1)[0]) else "autocast"
    release = gradscaler_release() if kind == "GradScaler" else autocast_release()
    if floor_allows(floor, release):
        return None
    if not api.startswith("torch.cuda.amp."):
        return (f"{kind} left off on MPS (on CUDA only, as before): on MPS it needs PyTorch {release} and the "
                f"PyTorch floor is {floor_text(floor)}")
    if kind == "GradScaler" and floor is not None and floor < TORCH_AMP_GRADSCALER:
        return f"torch.amp.GradScaler exists from PyTorch 2.3 and the floor is {floor_text(floor)}"
    return None


def decide(f: Finding, floor: Floor) -> tuple[str, str] | None:
    """Manual below the release where MPS has autocast or GradScaler (:func:`amp_below_floor`)."""
    why = amp_below_floor(f, floor)
    return ("manual", why) if why is not None else None


SPEC = Spec(("API108", "API109"), FIXES, decide)

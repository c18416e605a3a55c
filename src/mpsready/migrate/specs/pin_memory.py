"""API113: ``pin_memory=True`` becomes ``pin_memory=torch.cuda.is_available()`` (transforms/pin_memory.py)."""

from __future__ import annotations

from mpsready.findings import Finding
from mpsready.migrate.specs import Floor, Spec
from mpsready.rules import AutoFix

FIXES = {
    "API113": AutoFix("`pin_memory=True` becomes `pin_memory=torch.cuda.is_available()`; `.pin_memory()` calls stay manual.",
                      "DataLoader(ds, pin_memory=True)", "DataLoader(ds, pin_memory=torch.cuda.is_available())"),
}


def decide(f: Finding, floor: Floor) -> tuple[str, str] | None:
    """Manual for the method form ``.pin_memory()`` (the scan's message names it)."""
    if f.message.startswith(".pin_memory()"):
        # without an accelerator Tensor.pin_memory() raises ("Cannot access accelerator device when none is
        # available", PyTorch 2.13.0 CPU build)
        return "manual", "Tensor.pin_memory() raises without an accelerator: call it only when torch.cuda.is_available()"
    return None


SPEC = Spec(("API113",), FIXES, decide)

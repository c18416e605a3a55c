"""API115: a ``'cuda' in device`` test becomes ``torch.device(device).type`` (transforms/device_string_test.py)."""

from __future__ import annotations

from mpsready.findings import Finding
from mpsready.migrate.specs import Floor, Spec
from mpsready.rules import AutoFix

FIXES = {
    "API115": AutoFix("The string test becomes `torch.device(s).type`, so MPS is classified as 'mps' (marked as "
                      "changing the Mac path). In a file that calls autocast or GradScaler it is left as it is "
                      "(manual) unless the project's PyTorch floor has what they need on MPS.",
                      "device_type = 'cuda' if 'cuda' in device else 'cpu'",
                      "device_type = torch.device(device).type"),
}


def amp_test_below_floor(kinds: list[str], floor: Floor) -> str | None:
    """Why migrate keeps an API115 test in a file calling ``kinds`` (autocast, GradScaler) at this floor, or
    ``None`` when the floor has them on MPS."""
    from mpsready.migrate.mac_path import autocast_release, floor_allows, floor_text, gradscaler_release

    need = {"autocast": autocast_release(), "GradScaler": gradscaler_release()}
    missing = [k for k in kinds if not floor_allows(floor, need.get(k))]
    if not missing:
        return None
    return ("left as it is, to keep the Mac path: the file calls " + " and ".join(missing) + ", which MPS has from "
            + ", ".join(f"{k} {need[k]}" for k in missing) + f", and the PyTorch floor is {floor_text(floor)}")


def decide(f: Finding, floor: Floor) -> tuple[str, str] | None:
    """Manual in a file calling autocast or GradScaler (the finding's ``amp_calls``) below their MPS floor."""
    ev = f.evidence or {}
    if ev.get("amp_calls"):
        why = amp_test_below_floor(list(ev["amp_calls"]), floor)
        if why is not None:
            return "manual", why
    return None


SPEC = Spec(("API115",), FIXES, decide)

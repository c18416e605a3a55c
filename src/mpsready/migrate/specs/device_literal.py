"""API103: CUDA device literals become the selected device (transforms/device_literal.py)."""

from __future__ import annotations

from mpsready.findings import Finding
from mpsready.migrate.specs import Floor, Spec
from mpsready.rules import AutoFix

# the scan's message says the literal reaches the call through a variable: migrate leaves that to a person (API107 too)
ASSIGNED_ELSEWHERE = "the CUDA device or backend comes from a variable assigned elsewhere: change that assignment"

FIXES = {
    "API103": AutoFix("CUDA literals become the selected device: the variable `device` in scope or "
                      "`_mpsready_device()`; a string stays a string (`str(_mpsready_device())`); a device string "
                      "built at run time (`f'cuda:{rank}'`, `'cuda:{}'.format(rank)`) becomes "
                      "`_mpsready_device(int(rank))`; an argparse device default's literal `choices` gain `'mps'`. `torch.load` without "
                      "`map_location` gets one (found by migrate itself: no scan rule can see the checkpoint).",
                      "device = 'cuda'\nx = torch.zeros(3, device='cuda')\nstate = torch.load(path)",
                      "device = str(_mpsready_device())\nx = torch.zeros(3, device=device)\n"
                      "state = torch.load(path, map_location=device)"),
}


def _one_placeholder(message: str) -> bool:
    """Whether the run-time device string the scan shows (``'cuda:{rank}'``, ``'cuda:{}'``: f-strings and
    ``str.format`` calls) has one placeholder and nothing else, the form the API103 transform rewrites."""
    shown = message.split("'cuda:", 1)[1].split("'", 1)[0]
    return shown.startswith("{") and shown.endswith("}") and shown.count("{") == 1


def decide(f: Finding, floor: Floor) -> tuple[str, str] | None:
    """Manual for a device string built from more than one value, or a literal assigned elsewhere."""
    if "'cuda:{" in f.message and not _one_placeholder(f.message):
        return "manual", "the CUDA device string is built at run time from more than one value: select the device instead"
    if "assigned at line" in f.message:
        return "manual", ASSIGNED_ELSEWHERE
    return None


SPEC = Spec(("API103",), FIXES, decide)

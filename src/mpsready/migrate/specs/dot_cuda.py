"""API101: ``.cuda()`` moves become ``.to(device)`` (transforms/dot_cuda.py)."""

from __future__ import annotations

from mpsready.migrate.specs import Spec
from mpsready.rules import AutoFix

FIXES = {
    "API101": AutoFix("`.cuda()` / `.cuda(i)` become `.to(...)` the device the code around it already uses: the variable "
                      "`device` in scope (or the one the migrated selection binds), `self.device`, a module input's "
                      "`.device` inside a `Module`'s methods; in a project without a device selection of its own, a "
                      "small helper `_mpsready_device(i)` added once per file (CUDA with the same index, then MPS, then "
                      "CPU). Where the project selects its device and the code cannot see that choice, the finding is "
                      "manual (an independent choice would mix devices).",
                      "model = Net().cuda()\nx = x.cuda(1)", "model = Net().to(_mpsready_device())\nx = x.to(_mpsready_device(1))"),
}

SPEC = Spec(("API101",), FIXES)

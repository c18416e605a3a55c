"""API101: ``.cuda()`` moves become ``.to(device)`` (transforms/dot_cuda.py)."""

from __future__ import annotations

from mpsready.migrate.specs import Bucketed, Spec
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



def refine(rows: list[Bucketed]) -> None:
    """A ``.cuda()`` behind a guard that migrate turns into a device guard is fixed, not left as it is: ``if
    x.is_cuda:`` (the tensor follows ``x.device``: transforms/selection.py) and ``if args.cuda:`` in a file whose
    CUDA switch the scan reports as a selection (API104: the switch's guards of moves become ``if
    args.device.type != 'cpu':`` with ``.to(args.device)``)."""
    switched = {f.location.path for f, _kind, _why in rows if f.code == "API104"}
    for i, (f, kind, _why) in enumerate(rows):
        guard = (f.evidence or {}).get("flag_guard") if f.code == "API101" and kind == "kept" else None
        if guard == "is_cuda":
            rows[i] = (f, "auto", "the move follows the tensor its is_cuda guard tests: .to(x.device)")
        elif isinstance(guard, str) and guard and f.location.path in switched:
            rows[i] = (f, "auto", "the CUDA switch's guard becomes a device guard: .to(the selected device)")


SPEC = Spec(("API101",), FIXES, None, refine)

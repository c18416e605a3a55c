"""DTY102: a float32 cast after the move moves before it (transforms/numpy_float64.py)."""

from __future__ import annotations

from mpsready.findings import Finding
from mpsready.migrate.specs import Floor, Spec
from mpsready.rules import AutoFix

FIXES = {
    "DTY102": AutoFix("When a float32 cast follows the move, the cast moves before it (same float32 value, no "
                      "float64 on the device); without a cast the finding is listed for the user.",
                      "feats = torch.from_numpy(table).to(dev).float()", "feats = torch.from_numpy(table).float().to(dev)"),
}


def decide(f: Finding, floor: Floor) -> tuple[str, str] | None:
    """Manual without a float32 cast after the move (the finding's ``cast_after_move``)."""
    if not (f.evidence or {}).get("cast_after_move"):
        return "manual", ("float64 reaches the device with no float32 cast after it: check the value is not needed in "
                          "float64 later, then add .float() before .to()")
    return None


SPEC = Spec(("DTY102",), FIXES, decide)

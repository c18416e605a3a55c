"""API107: a literal ``'nccl'`` backend falls back to ``'gloo'`` without CUDA (transforms/nccl.py)."""

from __future__ import annotations

from mpsready.findings import Finding
from mpsready.migrate.specs import Floor, Spec
from mpsready.rules import AutoFix
from mpsready.migrate.specs.device_literal import ASSIGNED_ELSEWHERE

FIXES = {
    "API107": AutoFix("A literal `'nccl'` backend becomes `'nccl'` on CUDA, `'gloo'` otherwise.",
                      "dist.init_process_group('nccl')",
                      "dist.init_process_group('nccl' if torch.cuda.is_available() else 'gloo')"),
}


def decide(f: Finding, floor: Floor) -> tuple[str, str] | None:
    """Manual when the backend reaches the call through a variable assigned elsewhere."""
    return ("manual", ASSIGNED_ELSEWHERE) if "assigned at line" in f.message else None


SPEC = Spec(("API107",), FIXES, decide)

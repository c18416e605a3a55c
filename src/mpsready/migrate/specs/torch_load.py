"""API103 (found by migrate itself): ``torch.load`` without ``map_location`` gets one (transforms/torch_load.py); its
auto-fix is documented with API103 (specs/device_literal.py)."""

from __future__ import annotations

from mpsready.migrate.specs import Spec

SPEC = Spec(("API103",))

"""The plan as a JSON document (schema ``mpsready.migrate`` version 1)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from mpsready import __version__
from mpsready.migrate.engine import Plan
from mpsready.migrate.fixability import plan_effort
from mpsready.migrate.formats.diff import render_cells, render_diff
from mpsready.schema import utc_now

SCHEMA = {"name": "mpsready.migrate", "version": 1}


def render_json(plan: Plan, *, applied: list[str] | None = None, refused: list[str] | None = None,
                removed: list[str] | None = None, leftovers_kept: list[str] | None = None,
                verify: dict | None = None) -> str:
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "mpsready": __version__,
        "created": utc_now(),
        "basis": "predicted",
        "root": plan.root,
        "torch_floor": ".".join(map(str, plan.torch_floor)) if plan.torch_floor else None,
        "summary": {"edits": plan.edits, "files": len(plan.files), "manual": len(plan.manual), "kept": len(plan.kept),
                    "not_parsed": len(plan.errors), "fixed": len(plan.fixed), "rounds": plan.rounds,
                    "effort": {**plan_effort(plan.fixed, plan.manual, plan.kept), "basis": "plan"}},
        "files": [{"path": fp.path, "sha256_before": fp.sha256, "edits": [e.to_dict() for e in fp.edits]}
                  | ({"cells_diff": render_cells(dataclasses.replace(plan, files=[fp]))} if fp.path.endswith(".ipynb")
                     else {})
                  for fp in sorted(plan.files, key=lambda f: f.path)],
        "fixed": [r.to_dict() for r in plan.fixed],
        "manual": [m.to_dict() for m in plan.manual],
        "kept": [m.to_dict() for m in plan.kept],
        "not_parsed": plan.errors,
        "leftovers": plan.leftovers,
        "diff": render_diff(plan),
    }
    if verify is not None:
        doc["verify"] = verify
    if applied is not None:
        doc["applied"] = {"written": applied, "refused": refused or [], "removed_leftovers": removed or [],
                          "leftovers_kept": leftovers_kept or []}
    return json.dumps(doc, indent=2) + "\n"

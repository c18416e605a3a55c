"""Answers behind ``mpsready ops``: one op's support explained, and the diff of two releases.

Pure data in, plain dicts out (renderers in ``render.py``). Every answer says ``basis: "predicted"`` (from
the shipped tables) unless the table was observed (``--table`` with a ``--dump-installed`` file).
"""

from __future__ import annotations

from typing import Any

from mpsready import versions
from mpsready.ops.api import SupportDB, normalize_op

EFFECTS = {
    "kernel": ("runs on MPS", "runs on MPS"),
    "composite": ("runs on MPS if every op it calls does (a trace expands it)",
                  "runs on MPS if every op it calls does; any missing callee runs on CPU with a warning"),
    "missing": ("raises NotImplementedError (not currently implemented for the MPS device)",
                "runs on the CPU with a UserWarning (once); tensors are copied to and from the CPU"),
    "cpu_fallback_always": ("always runs on the CPU with a UserWarning (MPSFallback.mm), even without the variable",
                            "always runs on the CPU with a UserWarning (MPSFallback.mm)"),
    "guard": ("always raises on MPS tensors (a guard kernel in MPSFallback.mm)",
              "always raises on MPS tensors (the guard is registered directly; the variable does not help)"),
    "unknown": ("not in the table for this release: no prediction", "not in the table: no prediction"),
}


def fallback_behaviour(db: SupportDB, status: str, op: str) -> dict[str, Any]:
    """What happens with and without ``PYTORCH_ENABLE_MPS_FALLBACK=1`` (MPSFallback.mm, research note §2.3)."""
    without, with_env = EFFECTS[status]
    fb = db.fallback or {}
    out = {"env": fb.get("env", "PYTORCH_ENABLE_MPS_FALLBACK"), "without_env": without, "with_env": with_env,
           "read": fb.get("read"), "source": fb.get("source")}
    if status == "missing" and fb.get("unset"):
        out["error_text"] = fb["unset"].format(op=op, issue=fb.get("issue", ""))
    return out


def dtype_summary(db: SupportDB, support, macos: str | None) -> dict[str, Any]:
    """Global rules and the op's own exceptions at ``macos`` (all when None)."""
    rules = db.dtype_rules(macos=macos)
    return {
        "refused": sorted(r.dtype for r in rules if r.effect == "error"),
        "need_newer_macos": {r.dtype: r.min_macos for r in rules if r.effect == "unsupported_before"},
        "limited": {r.dtype: r.min_macos for r in rules if r.effect == "limited"},
        "op_exceptions": support.dtype_exceptions,
        "other_dtypes": "no per-op dtype list exists: dtypes not named here are expected to work where the "
                        "kernel's CPU/CUDA counterpart accepts them",
        "rules": [r.__dict__ for r in rules],
    }


def explain(db: SupportDB, name: str, macos: str | None = None) -> dict[str, Any]:
    """Everything ``mpsready ops OP`` prints, as one dict (JSON result row)."""
    s = db.lookup(name, macos=macos)
    routed = db.route_info(name)
    result = s.to_dict()
    result.update(
        basis=getattr(db, "basis", "predicted"),
        runs_on_mps=s.runs_on_mps,
        removed_again=bool(s.removed_in),
        torch_min_macos=db.min_macos,
        macos=macos,
        macos_supported=None if macos is None or db.min_macos is None else db.macos_supported(macos),
        dtypes=dtype_summary(db, s, macos),
        fallback=fallback_behaviour(db, s.status, s.op),
        autocast_mps=db.autocast_mps_policy.get(s.op) if db.autocast_mps else None,
        routed_on_mps=None if routed is None else {"op": "aten::" + routed["to"], **routed},
    )
    if s.min_macos and macos is not None:
        result["op_available_at_macos"] = not versions.macos_lt(macos, s.min_macos)
    return result


def diff(old: SupportDB, new: SupportDB) -> dict[str, Any]:
    """Status changes between two releases, grouped (every op by its yaml name)."""
    a, b = set(old.op_names()), set(new.op_names())
    groups: dict[str, list[dict[str, str]]] = {"gained_kernel": [], "lost_kernel": [], "other_change": []}
    for key in sorted(a & b):
        ra, rb = old.raw(key), new.raw(key)
        assert ra is not None and rb is not None  # key is in both tables' op_names()
        sa, sb = ra["s"], rb["s"]
        if sa == sb:
            continue
        row = {"op": f"aten::{key}", "from": sa, "to": sb, "how": rb["h"]}
        if sb == "kernel":
            groups["gained_kernel"].append(row)
        elif sa == "kernel":
            groups["lost_kernel"].append(row)
        else:
            groups["other_change"].append(row)
    changed_dx = [f"aten::{k}" for k in sorted(a & b)
                  if (old.raw(k) or {}).get("dx", {}) != (new.raw(k) or {}).get("dx", {})]
    return {
        "from": old.torch_version, "to": new.torch_version,
        **groups,
        "added": [f"aten::{k}" for k in sorted(b - a)],
        "removed": [f"aten::{k}" for k in sorted(a - b)],
        "dtype_exceptions_changed": changed_dx,
        "min_macos": {"from": old.min_macos, "to": new.min_macos},
        "summary": {**{k: len(v) for k, v in groups.items()}, "added": len(b - a), "removed": len(a - b),
                    "dtype_exceptions_changed": len(changed_dx)},
        "basis": "predicted",
    }


def op_key(name: str) -> str:
    """Display name (``aten::relu``) of a user-given op name."""
    ns, key = normalize_op(name)
    return f"{ns}::{key}"

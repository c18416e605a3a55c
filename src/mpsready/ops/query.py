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


# Why the release's global dtype rules are no facts about an op that no MPS kernel runs (h33h: `ops
# aten::linalg_eig --torch 2.5` printed "missing" and then "never: float64 / need newer macOS: bfloat16 ..." as if
# the op ran on MPS for the other dtypes). The rules are device-wide (research note §6); only a kernel or a
# composite's callees compute on MPS. The fallback computes on the CPU (MPSFallback.mm, research note §2.3).
SCOPE_NOTES = {
    "missing": "no MPS kernel in torch {torch}, so no dtype runs this op on MPS. With {env}=1 it "
               "computes on the CPU in any dtype its CPU kernel takes; the device-wide limits bind at most its MPS "
               "inputs and outputs",
    "cpu_fallback_always": "torch {torch} always computes this op on the CPU (MPSFallback.mm), in "
                           "any dtype its CPU kernel takes; the device-wide limits bind at most its MPS inputs and "
                           "outputs",
    "guard": "torch {torch} raises on MPS tensors for this op in every dtype (a guard kernel in "
             "MPSFallback.mm)",
    "unknown": "the op is not in the table of torch {torch}, so nothing is known of its dtypes",
}
ROUTED_NOTE = ("no MPS kernel in torch {torch}; on MPS the call dispatches {to} instead, and the "
               "device-wide limits apply to that path")


def dtype_scope(status: str, torch: str, env: str, routed: dict | None = None) -> tuple[str, str | None]:
    """``(scope, note)`` of an op's dtype facts: ``op`` when MPS computes it (a kernel, or a composite whose
    callees run on MPS), ``routed`` when the call dispatches another op on MPS instead, ``device`` when no MPS
    kernel runs it (missing, CPU fallback, guard) or the table does not know it: the rules are then the release's
    device-wide MPS limits, not facts about this op."""
    if status in ("kernel", "composite"):
        return "op", None
    if routed is not None:
        return "routed", ROUTED_NOTE.format(torch=torch, to="aten::" + routed["to"])
    return "device", SCOPE_NOTES[status].format(torch=torch, env=env)


def dtype_summary(db: SupportDB, support, macos: str | None, routed: dict | None = None) -> dict[str, Any]:
    """Global rules and the op's own exceptions at ``macos`` (all when None), with their ``scope``."""
    rules = db.dtype_rules(macos=macos)
    env = (db.fallback or {}).get("env", "PYTORCH_ENABLE_MPS_FALLBACK")
    scope, note = dtype_scope(support.status, db.torch_version, env, routed)
    return {
        "scope": scope,
        "note": note,
        "refused": sorted(r.dtype for r in rules if r.effect == "error"),
        "need_newer_macos": {r.dtype: r.min_macos for r in rules if r.effect == "unsupported_before"},
        "limited": {r.dtype: r.min_macos for r in rules if r.effect == "limited"},
        "op_exceptions": support.dtype_exceptions,
        "other_dtypes": "no per-op dtype list exists: dtypes not named here are expected to work where the "
                        "kernel's CPU/CUDA counterpart accepts them" if scope == "op" else
                        "not applicable (see note)",
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
        dtypes=dtype_summary(db, s, macos, routed),
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

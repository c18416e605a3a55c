"""The cost of fixing one finding: the rung of the outlook's cost ladder it puts the project on.

A remedy is stored in the finding's ``remedy`` (shown in documents as ``evidence["remedy"]``)::

    {"kind": "flag",  "flag": "--device mps"}                  only a command-line flag or config value
    {"kind": "edit",  "migrate": true | false}                  a local code edit (migrate: `mpsready migrate` makes it,
                                                                as :func:`mpsready.migrate.fixability.buckets` says)
    {"kind": "wire",  "path": "models/ops/functions/x.py:41"}   an in-repo pure-PyTorch path must be wired in
    {"kind": "swap",  "what": "raise the pin to >= 0.50.0"}     a declared dependency is left out, swapped or raised
    {"kind": "none"}                                            no usable path in the repository or on PyPI

Which findings limit the outlook at all is decided by :func:`limits`: blockers on the main path, plus the
device selections that silently keep a Mac on the CPU (API104). Findings in tests, docs, examples,
vendored code, distributed-only code, demo notebooks, files off the main entries' import path, a package
module's ``__main__`` demo block (:mod:`mpsready.scan.model.graph`), container recipes (a Dockerfile builds
the CUDA server's environment, not the Mac's), or only behind a flag that is off by default never limit it.
"""

from __future__ import annotations

from typing import Any, Iterable

from mpsready.findings import Finding, Scope, Severity
from mpsready.rules import fixability  # the transforms' declared per-finding answer (no libcst)

FLAG, EDIT, WIRE, SWAP, NONE = "flag", "edit", "wire", "swap", "none"
RUNG = {FLAG: 0, EDIT: 1, WIRE: 1, SWAP: 1, NONE: 2}

# degrades that still need an edit before the Mac's GPU is used at all (the project silently runs on the CPU)
SILENT_CPU = {"API104"}
_DEP_SWAP = {"DEP101", "DEP102", "DEP103", "DEP104", "DEP105", "DEP106", "DEP107", "DEP109", "DEP111"}
# evidence["reach"] values (model/graph.py: mark_reach) of findings that never limit the main path's outlook
OFF_PATH_REACH = ("off_main_path", "demo_notebook", "module_demo", "container")
_KERNELS = {"EXT101", "EXT102", "EXT103", "EXT104", "EXT105", "EXT106"}


def migrate_can(f: Finding) -> bool:
    """Whether `mpsready migrate` makes the edit for ``f``: its rule has an auto-fix in the registry
    (:func:`mpsready.rules.autofix_of`, filled by :mod:`mpsready.migrate.fixability`) and the finding's shape is one
    the transform rewrites (:func:`mpsready.migrate.fixability.bucket`). Findings seen alone; :func:`with_remedies`
    also counts an edit that fixes two findings of one call."""
    return fixability().bucket(f)[0] == "auto"


def limits(f: Finding) -> bool:
    """Whether ``f`` can limit the outlook of the main path (see the module doc)."""
    if f.scope is not Scope.MAIN or f.behind_flag or f.reach in OFF_PATH_REACH:
        return False
    if f.code.startswith("INP"):
        return False
    # an API104 judged no limit (info: a 0-dim scalar's device, a branch a Mac never takes) keeps the Mac on MPS
    return f.severity is Severity.BLOCKER or (f.code in SILENT_CPU and f.severity is not Severity.INFO)


def remedy_of(f: Finding, migrate: bool | None = None) -> dict[str, Any]:
    """The remedy of one finding, from its evidence (a flag or pure path the engine found) and its rule.
    ``migrate`` (for an edit): whether `mpsready migrate` makes it; ``None``: :func:`migrate_can`."""
    ev = f.evidence or {}
    if f.remedy:
        return dict(f.remedy)
    if ev.get("flag"):
        return {"kind": FLAG, "flag": ev["flag"]}
    if ev.get("argument"):  # a Python argument the caller's code passes is an edit there, not a flag (round 7)
        return {"kind": EDIT, "migrate": False,
                "what": f"pass {ev['argument']} in the code that calls it, or make its default pick MPS"}
    if f.code in _KERNELS:
        if f.pure_path:
            return {"kind": WIRE, "path": f.pure_path}
        return {"kind": NONE} if ev.get("no_alternative") else {"kind": EDIT, "migrate": False}
    if ev.get("raise_torch_to"):  # a code finding that a newer PyTorch fixes (API118: SparseMPS kernels from 2.9)
        at = f" ({ev['pin_at']})" if ev.get("pin_at") else ""
        return {"kind": SWAP, "what": f"raise the torch pin to >= {ev['raise_torch_to']}{at}"}
    if f.code in _DEP_SWAP:
        if ev.get("no_alternative") and not ev.get("raise_to"):
            return {"kind": NONE}
        if f.code == "DEP109":  # torch pinned before 1.12: no release in the pin has the MPS backend
            return {"kind": SWAP, "what": "raise the torch pin to >= 1.12 (the first release with the MPS backend)"}
        what = f"raise the pin to >= {ev['raise_to']}" if ev.get("raise_to") else (
            f"use {ev['alternative']}" if ev.get("alternative") else "leave it out on the Mac")
        return {"kind": SWAP, "what": what}
    if ev.get("no_alternative"):
        return {"kind": NONE}
    return {"kind": EDIT, "migrate": migrate_can(f) if migrate is None else migrate}


def with_remedy(f: Finding, migrate: bool | None = None) -> Finding:
    """``f`` with ``remedy`` filled in (every finding that can limit the outlook has one)."""
    if not limits(f):
        return f
    remedy = remedy_of(f, migrate)
    if remedy["kind"] == EDIT and migrate is not None:  # an edit the project model chose (argparse choices)
        remedy["migrate"] = migrate
    return f.with_state(remedy=remedy)


def with_remedies(findings: Iterable[Finding], floor: tuple[int, int] | None = None) -> list[Finding]:
    """:func:`with_remedy` for every finding, the migrate mark taken from the findings together
    (:func:`mpsready.migrate.fixability.buckets`), so the outlook marks exactly what the effort counts as auto-fixable."""
    return [with_remedy(f, kind == "auto") for f, kind, _ in fixability().buckets(findings, floor)]

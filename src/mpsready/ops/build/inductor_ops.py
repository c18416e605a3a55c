"""Mine which elementwise ops each release's Inductor Metal code generation has no code for (maintainers only, never
at run time).

    # per release, the three files of its macOS arm64 wheel (pip download torch==V --no-deps --platform
    # macosx_14_0_arm64 --python-version 3.11 --only-binary=:all:), unzipped into DIR/<V>/:
    #   torch/_inductor/codegen/mps.py  torch/_inductor/codegen/common.py  torch/_inductor/ops_handler.py
    PYTHONPATH=src python -m mpsready.ops.build.inductor_ops --sources DIR \\
        -o src/mpsready/ops/data/mined/inductor_mps_ops.json

Inductor lowers an elementwise aten op to a call of its ops handler (``ops.sinh(x)``); the Metal back-end's handler
is ``MetalOverrides`` (``codegen/mps.py``). A method it neither defines (its class body, the names its
``_initialize_special_ops`` sets, the ``mps=`` entries of ``pointwise_overrides_data`` in ``codegen/common.py``)
nor inherits with a body (``OpOverrides``, ``OpDecompositions``, ``BasicMathOpsMixin``: defaults written in terms of
other ops) resolves to the abstract ``OpsHandler`` method of ``ops_handler.py``, whose body is ``raise
NotImplementedError``: the compiled region fails, and Inductor reports ``InductorError: NotImplementedError: ``
(``InductorError`` prints ``f"{type(inner).__name__}: {inner}"``, torch/_inductor/exc.py; the inner text is empty).
Read with :mod:`ast` (nothing imported), every release in its own files (``range: read``).

Which aten ops reach such a method is read once, in the installed torch's Inductor (``lowering.lowerings``, less
``lowering.fallbacks`` and the decomposition table ``decomposition.select_decomp_table()``): an aten op whose name
is the method's (``sinh``) or ``special_`` + it, lowered as itself (inferred for other releases: Inductor's pointwise
lowerings keep their names across releases). Checked against a public record: a compiled ``torch.sinh`` on MPS
raised ``NotImplementedError`` on 2.14 (the PR adding sinh, cosh, asinh, acosh, hypot, copysign, logical_xor, frexp
and ldexp to the Metal handler, 2026-09, after 2.14): the names of the 2.14.0 list that aten ops reach are exactly
those nine and ``nextafter``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
from pathlib import Path
from typing import Any

FILES = ("torch/_inductor/codegen/mps.py", "torch/_inductor/codegen/common.py", "torch/_inductor/ops_handler.py")
SCHEMA = "mpsready.inductor-mps-ops"
_DEFAULTS = ("OpOverrides", "OpDecompositions", "BasicMathOpsMixin")  # handler classes whose methods have bodies


def _class(tree: ast.AST, name: str) -> ast.ClassDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def _members(cls: ast.ClassDef | None) -> set[str]:
    """Names a class body defines: methods and class-level assignments."""
    out: set[str] = set()
    for node in cls.body if cls is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def _special(cls: ast.ClassDef | None) -> set[str]:
    """Names ``_initialize_special_ops`` sets on the class: the string lists it loops over and ``cls.<name> = ...``."""
    out: set[str] = set()
    for node in cls.body if cls is not None else ():
        if not (isinstance(node, ast.FunctionDef) and node.name == "_initialize_special_ops"):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.For) and isinstance(sub.iter, (ast.List, ast.Tuple)):
                out.update(e.value for e in sub.iter.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
            elif isinstance(sub, ast.Assign):
                out.update(t.attr for t in sub.targets if isinstance(t, ast.Attribute)
                           and isinstance(t.value, ast.Name) and t.value.id == "cls")
    return out


def _mps_overrides(common: ast.AST) -> set[str]:
    """Keys of ``pointwise_overrides_data = dict(name=OverridesData(..., mps=...))`` with an ``mps`` implementation."""
    out: set[str] = set()
    for node in ast.walk(common):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            for kw in node.keywords:
                v = kw.value
                if (kw.arg and isinstance(v, ast.Call) and isinstance(v.func, ast.Name)
                        and v.func.id == "OverridesData" and any(k.arg == "mps" for k in v.keywords)):
                    out.add(kw.arg)
    return out


def missing(mps: str, common: str, ops_handler: str) -> list[str]:
    """The ops-handler methods (``OpsHandler``'s) the Metal handler has no code for, from the three files' text."""
    t_mps, t_common, t_handler = ast.parse(mps), ast.parse(common), ast.parse(ops_handler)
    metal = _class(t_mps, "MetalOverrides")
    have = _members(metal) | _special(metal) | _mps_overrides(t_common)
    for name in _DEFAULTS:
        for tree in (t_common, t_handler):
            have |= _members(_class(tree, name))
    return sorted(_members(_class(t_handler, "OpsHandler")) - have)


def mine_release(folder: Path) -> dict[str, Any] | None:
    """One release folder with the three files; None when its wheel has no Metal code generation."""
    paths = [folder / f for f in FILES]
    if not all(p.exists() for p in paths):
        return None
    texts = [p.read_text(encoding="utf-8") for p in paths]
    return {"missing": missing(*texts), "range": "read",
            "source": {f: hashlib.sha256(t.encode("utf-8")).hexdigest() for f, t in zip(FILES, texts)}}


def lowered_as_itself(names: set[str]) -> dict[str, list[str]]:
    """handler method -> the aten ops (base names) the installed Inductor lowers to it by name: in
    ``lowering.lowerings``, not a fallback, not decomposed (module docstring)."""
    import torch
    from torch._inductor import decomposition, lowering

    decomps = decomposition.select_decomp_table()
    out: dict[str, list[str]] = {}
    for name in sorted(names):
        for cand in (name, "special_" + name):
            packet = getattr(torch.ops.aten, cand, None)
            if packet is None:
                continue
            ovs = [getattr(packet, o) for o in packet.overloads()]
            if any(o in lowering.lowerings and o not in lowering.fallbacks and o not in decomps for o in ovs):
                out.setdefault(name, []).append(cand)
    return out


def main(argv: list[str] | None = None) -> int:
    from mpsready.ops.build.harvest import mine_each

    ap = argparse.ArgumentParser(prog="python -m mpsready.ops.build.inductor_ops",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--sources", metavar="DIR", required=True, help="one folder per release with the three files")
    ap.add_argument("-o", "--output", metavar="FILE", help="write the facts (data/mined/inductor_mps_ops.json)")
    args = ap.parse_args(argv)
    releases = mine_each(Path(args.sources), mine_release, "inductor_ops")
    if releases is None:
        return 2
    import torch

    lowered = lowered_as_itself(set().union(*(set(f["missing"]) for f in releases.values())))
    for rel, f in releases.items():
        reach = [n for n in f["missing"] if n in lowered]
        print(f"{rel:8} no Metal code for {len(f['missing'])} handler ops; reached by aten ops: {', '.join(reach)}")
    if args.output:
        doc = {"schema": SCHEMA, "version": 1, "releases": releases, "lowered_as": lowered,
               "lowered_read_in": torch.__version__.split("+")[0],
               "note": "missing: OpsHandler methods MetalOverrides has no code for (raise NotImplementedError); "
                       "lowered_as: the aten ops Inductor lowers to each by name (installed torch, inferred for "
                       "the others)"}
        Path(args.output).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

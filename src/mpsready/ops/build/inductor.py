"""Mine what each release's Inductor Metal code generation can lower (maintainers only, never at run time).

    PYTHONPATH=src python -m mpsready.ops.build.harvest --out /tmp/torchsrc 2.7.0 ... 2.14.1
    PYTHONPATH=src python -m mpsready.ops.build.inductor --sources /tmp/torchsrc \\
        -o src/mpsready/ops/data/mined/inductor_mps.json

``torch/_inductor/codegen/mps.py`` is Python shipped in every wheel from 2.7.0 (before it there is no Metal back-end:
a compiled MPS graph fails in ``scheduler.py``, python_checks.yaml ``compile``). ``harvest`` keeps the file of each
release's macOS arm64 wheel; this reads it with :mod:`ast` (never imports it) and records, per release:

* ``reductions``: the reduction types ``MetalKernel.reduction`` (2.7) or ``_reduction_nocache`` (2.8+) generates
  code for (the string constants ``reduction_type`` is compared with); any other type reaches the method's final
  ``raise NotImplementedError(reduction_type)``, which Inductor reports as ``InductorError: NotImplementedError:
  <type>`` (2.7.0 has no ``welford_combine``: the second stage of a split variance or norm);
* ``multistage_refused``: reduction types whose branch asserts ``not self.multistage_reduction`` (2.7.0's
  ``welford_reduce``: ``AssertionError: Multistage reduction not yet supported for welford_reduce``), with the
  assertion's message pattern;
* ``metal_dtypes``: the keys of ``DTYPE_TO_METAL`` (``MetalKernel.dtype_to_str`` indexes it for every buffer of a
  generated kernel: a dtype outside it raises ``KeyError: torch.<dtype>``; the unsigned 16/32/64-bit types appear in
  2.14.0);
* ``max_threadgroup_size``: the class attribute (1024 in every release: a longer reduction is multistage);
* ``symbolic_size_printed``: reduction types whose branch writes the reduction buffer's size into the generated
  Metal source raw (an f-string of the name ``acc_buf_size``) where the method computes that size with
  ``sympy.<Fn>(...)``: with a symbolic reduction length (``torch.compile(dynamic=True)``) Python prints the sympy
  call itself, ``Min(1024, r0_numel)``, and the Metal compiler stops at ``use of undeclared identifier 'Min'``
  (2.9.0-2.12.1's multistage ``welford_reduce``; 2.13.0 prints ``acc_buf_size_str``, PR #184206). The type maps to
  the function name printed.

Each entry carries its wheel (name, sha256, source commit, from ``wheel.json``) and ``range: read``: every release is
read in its own file, nothing is carried over.
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path
from typing import Any

CODEGEN = "torch/_inductor/codegen/mps.py"
SCHEMA = "mpsready.inductor-mps"
# torch dtype attribute aliases as DTYPE_TO_METAL spells some keys (torch.float, torch.half)
_ALIASES = {"float": "float32", "half": "float16", "double": "float64", "long": "int64", "int": "int32",
            "short": "int16", "cfloat": "complex64"}


def _dtype_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch":
        return _ALIASES.get(node.attr, node.attr)
    return None


def _strings(node: ast.AST) -> set[str]:
    return {k.value for k in ast.walk(node) if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def _assert_text(msg: ast.expr | None, reduction_type: str) -> str:
    """The text an assertion prints for ``reduction_type``: its f-string with ``{reduction_type}`` filled in."""
    if msg is None:
        return ""
    if isinstance(msg, ast.Constant):
        return str(msg.value)
    parts = []
    for v in msg.values if isinstance(msg, ast.JoinedStr) else []:
        if isinstance(v, ast.Constant):
            parts.append(str(v.value))
        elif isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name) and v.value.id == "reduction_type":
            parts.append(reduction_type)
        else:
            parts.append("{" + ast.unparse(v) + "}")
    return "".join(parts)


def _sympy_size_fn(func: ast.FunctionDef) -> str | None:
    """The sympy function (``"Min"``) the reduction method assigns ``acc_buf_size`` from (``acc_buf_size =
    sympy.Min(...)``), or None (a Python ``min``, or another module's ``Min`` that prints as Metal)."""
    for node in ast.walk(func):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "acc_buf_size" and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute) and isinstance(node.value.func.value, ast.Name)
                and node.value.func.value.id == "sympy"):
            return node.value.func.attr
    return None


def _prints_raw_size(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` formats the name ``acc_buf_size`` itself into an f-string (generated source)."""
    return any(isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name) and v.value.id == "acc_buf_size"
               for node in ast.walk(stmt) if isinstance(node, ast.JoinedStr) for v in node.values)


def mine_codegen(text: str) -> dict[str, Any]:
    """The facts of one ``codegen/mps.py`` (module docstring)."""
    tree = ast.parse(text)
    out: dict[str, Any] = {"reductions": [], "multistage_refused": {}, "metal_dtypes": [],
                           "max_threadgroup_size": None, "symbolic_size_printed": {}}
    for stmt in tree.body:
        value: ast.expr | None
        if isinstance(stmt, ast.Assign):
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "DTYPE_TO_METAL" and isinstance(value, ast.Dict):
            out["metal_dtypes"] = sorted({d for k in value.keys if k is not None for d in [_dtype_name(k)] if d})
    reductions: set[str] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "max_threadgroup_size" and isinstance(node.value, ast.Constant)):
            out["max_threadgroup_size"] = node.value.value
        if not (isinstance(node, ast.FunctionDef) and node.name in ("reduction", "_reduction_nocache")):
            continue
        size_fn = _sympy_size_fn(node)
        for branch in ast.walk(node):
            if not isinstance(branch, ast.If):
                continue
            test = branch.test
            if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
                    and test.left.id == "reduction_type"):
                continue
            types = set().union(*(_strings(c) for c in test.comparators))
            reductions |= types
            for stmt in branch.body:  # a branch that refuses the multistage form of its types
                if (isinstance(stmt, ast.Assert) and "multistage_reduction" in ast.unparse(stmt.test)
                        and isinstance(stmt.test, ast.UnaryOp)):
                    for t in types:
                        out["multistage_refused"][t] = _assert_text(stmt.msg, t)
            if size_fn and any(_prints_raw_size(stmt) for stmt in branch.body):
                for t in types:
                    out["symbolic_size_printed"][t] = size_fn
    out["reductions"] = sorted(reductions)
    return out


def mine_release(folder: Path) -> dict[str, Any] | None:
    """One release folder (``harvest``'s layout); None when its wheel has no Metal code generation."""
    path = folder / CODEGEN
    if not path.exists():
        return None
    facts = mine_codegen(path.read_text(encoding="utf-8"))
    wheel = json.loads((folder / "wheel.json").read_text()) if (folder / "wheel.json").exists() else {}
    facts["source"] = {"file": CODEGEN, "wheel": wheel.get("wheel"), "sha256": wheel.get("sha256"),
                       "git_version": wheel.get("git_version"), "range": "read"}
    return facts


def main(argv: list[str] | None = None) -> int:
    from mpsready.ops.build.harvest import mine_each

    ap = argparse.ArgumentParser(prog="python -m mpsready.ops.build.inductor", description=__doc__.splitlines()[0])
    ap.add_argument("--sources", metavar="DIR", required=True, help="one folder per release (harvest --out)")
    ap.add_argument("-o", "--output", metavar="FILE", help="write the facts (data/mined/inductor_mps.json)")
    args = ap.parse_args(argv)
    releases = mine_each(Path(args.sources), mine_release, "inductor")
    if releases is None:
        return 2
    for rel, f in releases.items():
        print(f"{rel:8} reductions={','.join(f['reductions'])} multistage_refused="
              f"{','.join(f['multistage_refused']) or '-'} metal_dtypes={len(f['metal_dtypes'])} "
              f"symbolic_size_printed={','.join(f['symbolic_size_printed']) or '-'}")
    if args.output:
        doc = {"schema": SCHEMA, "version": 1, "first_release": "2.7.0",
               "note": "releases before 2.7.0 ship no torch/_inductor/codegen/mps.py (no Metal back-end)",
               "releases": releases}
        Path(args.output).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

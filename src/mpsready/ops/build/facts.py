"""Mine MPS refusal facts from PyTorch's own sources, per release, and measure what the data covers (issue 33).

Maintainers only, never at run time; offline, from files the maintainer provides::

    PYTHONPATH=src python -m mpsready.ops.build.facts --sources DIR [-o facts.json]   # mine, print coverage
    PYTHONPATH=src python -m mpsready.ops.build.facts                                 # coverage of shipped data

``DIR`` holds one folder per release, named by its version (``DIR/2.5.1/``), with the files of that release's
source tree under their repository paths (``git archive v2.5.1 aten/src/ATen/native/mps
aten/src/ATen/native/native_functions.yaml torch/testing/_internal/common_mps.py``, or the four members
``mpsready.ops.build.fetch`` keeps). From them:

* every ``TORCH_CHECK``/``TORCH_CHECK_TYPE``/``TORCH_CHECK_NOT_IMPLEMENTED`` in the MPS operator sources
  (``aten/src/ATen/native/mps/**/*.mm``, ``*.h``, ``*.cpp``): its condition, its message (string literals kept,
  other parts shown as ``{expr}``), the function it sits in, and a class read from the condition (``dtype``,
  ``rank``, ``size``, ``macos``, ``other``); the function is tied to the aten overloads whose yaml ``dispatch``
  names it for ``MPS`` (and their ``structured_delegate`` variants). The C++ is scanned with a small tokenizer
  (strings, comments and nested parentheses), not a C++ parser: a fact records the file and line to read;
* ``common_mps.py``'s expected-failure lists, evaluated per macOS (:mod:`mpsready.ops.build.common_mps`): the
  OpInfo keys with dtypes that fail, mapped to aten overloads (``data/curated/opinfo_map.json``).

Each fact carries ``release``, ``source`` (``path:line @ release``) and ``range``: ``read`` (read in that release's
file); facts are never extended to other releases here. The output JSON (schema ``mpsready.ops-facts`` v1) is
``{"releases": {version: {"facts": [...], "coverage": {...}}}}``; the coverage printed per release is: aten
overloads with an MPS kernel, those with at least one mined fact, those with a ``common_mps.py`` dtype fact, and
the dtypes any fact names. Without ``--sources`` it prints the coverage of the shipped tables and curated files
(the figures in docs/emulation.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

import yaml

SCHEMA = {"name": "mpsready.ops-facts", "version": 1}
MPS_DIR = "aten/src/ATen/native/mps"
YAML = "aten/src/ATen/native/native_functions.yaml"
COMMON_MPS = "torch/testing/_internal/common_mps.py"
CHECKS = ("TORCH_CHECK_NOT_IMPLEMENTED", "TORCH_CHECK_TYPE", "TORCH_CHECK")
# words of a condition that say what it checks (the first class that matches wins)
_CLASSES = (("macos", ("is_macos", "MacOSVersion", "macOS", "is_macOS")),
            ("dtype", ("scalar_type", "ScalarType", "isIntegralType", "isComplexType", "isFloatingType", "dtype",
                       "kLong", "kInt", "kDouble", "kBool", "kHalf", "kBFloat16", "kComplex")),
            ("rank", ("dim()", "ndim", ".dim(", "dims")),
            ("size", ("numel", "size(", "sizes", "INT_MAX", "max()", "nbytes")))
_DTYPE_WORDS = {"kLong": "int64", "kInt": "int32", "kShort": "int16", "kChar": "int8", "kByte": "uint8",
                "kBool": "bool", "kHalf": "float16", "kFloat": "float32", "kDouble": "float64",
                "kBFloat16": "bfloat16", "kComplexFloat": "complex64", "kComplexDouble": "complex128",
                "ScalarType::Long": "int64", "ScalarType::Int": "int32", "ScalarType::Double": "float64",
                "ScalarType::Bool": "bool", "ScalarType::Half": "float16", "ScalarType::BFloat16": "bfloat16",
                "ScalarType::ComplexFloat": "complex64", "ScalarType::ComplexDouble": "complex128",
                "ScalarType::Byte": "uint8", "ScalarType::Char": "int8", "ScalarType::Short": "int16"}


@dataclass
class Fact:
    """One refusal read in one release's source."""

    release: str
    ops: list[str]
    function: str | None
    kind: str  # dtype | rank | size | macos | other | common_mps
    condition: str
    message: str
    dtypes: list[str]
    source: str
    range: str = "read"


# ------------------------------------------------------------------ a small C++ tokenizer
def _skip_string(text: str, i: int) -> int:
    """Index after the string or char literal starting at ``text[i]``."""
    quote = text[i]
    i += 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _blank_comments(text: str) -> str:
    """``text`` with comments replaced by spaces (newlines kept, so lines stay where they are)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = _skip_string(text, i)
            out.append(text[i:j])
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _call_args(text: str, i: int) -> tuple[list[str], int]:
    """The top-level comma-separated arguments of the call whose ``(`` is at ``text[i]``, and the index after it."""
    depth, args, start, j = 0, [], i + 1, i
    while j < len(text):
        c = text[j]
        if c in "\"'":
            j = _skip_string(text, j)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[start:j].strip())
                return args, j + 1
        elif c == "," and depth == 1:
            args.append(text[start:j].strip())
            start = j + 1
        j += 1
    return args, j


def _message(parts: list[str]) -> str:
    """String literals as they are (adjacent literals joined), anything else as ``{expr}``."""
    out = []
    for p in parts:
        p = p.strip()
        if len(p) >= 2 and p[0] == p[-1] == '"':
            pieces, k = [], 0
            while k < len(p):
                if p[k] == '"':
                    end = _skip_string(p, k)
                    pieces.append(p[k + 1:end - 1].encode().decode("unicode_escape", "replace"))
                    k = end
                else:
                    k += 1
            out.append("".join(pieces))
        elif p:
            out.append("{" + " ".join(p.split()) + "}")
    return "".join(out)


def _functions(text: str) -> list[tuple[int, str]]:
    """``(offset, name)`` of each brace-depth-0 function body opening: the identifier before the ``(`` of its
    signature."""
    out, depth, i = [], 0, 0
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = _skip_string(text, i)
            continue
        if c == "{":
            if depth == 0:
                head = text[max(0, i - 400):i]
                paren = head.rfind("(")
                if paren > 0 and head.rstrip().endswith((")", "const", "override")):
                    name = head[:paren].rstrip().split()[-1] if head[:paren].split() else ""
                    if name.endswith(")") and "(" in name:  # TORCH_IMPL_FUNC(cumsum_out_mps)\n(args) {
                        name = name[name.index("(") + 1:-1]
                    name = name.split("::")[-1].lstrip("*&")
                    if name.isidentifier():
                        out.append((i, name))
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        i += 1
    return out


def checks_in(text: str) -> Iterator[tuple[int, str, str, list[str]]]:
    """``(line, function, condition, message parts)`` of every TORCH_CHECK* call in C++ ``text``."""
    clean = _blank_comments(text)
    funcs = _functions(_strip_namespaces(clean))
    i = 0
    while True:
        hit, name = min(((clean.find(n + "(", i), n) for n in CHECKS), key=lambda p: (p[0] < 0, p[0]))
        if hit < 0:
            return
        if hit > 0 and (clean[hit - 1].isalnum() or clean[hit - 1] == "_"):
            i = hit + len(name)
            continue
        args, end = _call_args(clean, hit + len(name))
        line = clean.count("\n", 0, hit) + 1
        fn = next((f for off, f in reversed(funcs) if off < hit), None)
        cond = args[0] if name != "TORCH_CHECK_NOT_IMPLEMENTED" or args else ""
        yield line, fn or "", " ".join(cond.split()), args[1:]
        i = end


def _strip_namespaces(text: str) -> str:
    """``namespace x {`` openings blanked (their braces too), so that functions inside read as depth 0."""
    out = list(text)
    i = 0
    while True:
        j = text.find("namespace", i)
        if j < 0:
            break
        k = text.find("{", j)
        semi = text.find(";", j)
        if k >= 0 and (semi < 0 or k < semi) and text[j + 9:k].strip().replace("::", "").replace("_", "").isalnum():
            out[k] = " "
            depth, m = 1, k + 1
            while m < len(text) and depth:
                if text[m] in "\"'":
                    m = _skip_string(text, m)
                    continue
                if text[m] == "{":
                    depth += 1
                elif text[m] == "}":
                    depth -= 1
                    if depth == 0:
                        out[m] = " "
                m += 1
        i = j + 9
    return "".join(out)


def classify(condition: str) -> tuple[str, list[str]]:
    """(kind, dtypes named) of a check's condition."""
    kind = next((k for k, words in _CLASSES if any(w in condition for w in words)), "other")
    dtypes = sorted({d for w, d in _DTYPE_WORDS.items() if w in condition})
    return kind, dtypes


# ------------------------------------------------------------------ the yaml: kernel function -> aten overloads
def kernel_ops(yaml_text: str) -> tuple[dict[str, list[str]], set[str]]:
    """``({MPS kernel function: [overloads]}, {overloads with an MPS kernel})`` from native_functions.yaml
    (structured delegates inherit their ``.out`` op's kernel)."""
    entries = yaml.safe_load(yaml_text) or []
    by_fn: dict[str, list[str]] = defaultdict(list)
    kernel_of: dict[str, str] = {}
    delegates: dict[str, str] = {}
    for e in entries:
        name = str(e["func"]).split("(", 1)[0].strip()
        for keys, fn in (e.get("dispatch") or {}).items():
            if "MPS" in [k.strip() for k in str(keys).split(",")]:
                by_fn[str(fn)].append(name)
                kernel_of[name] = str(fn)
        if e.get("structured_delegate"):
            delegates[name] = str(e["structured_delegate"])
    for name, out in delegates.items():
        if out in kernel_of:
            by_fn[kernel_of[out]].append(name)
            kernel_of[name] = kernel_of[out]
    return dict(by_fn), set(kernel_of)


def _stem(fn: str) -> str:
    for suffix in ("_out_mps", "_mps_out", "_mps", "_out"):
        if fn.endswith(suffix):
            return fn[: -len(suffix)]
    return fn


# ------------------------------------------------------------------ one release
def mine_release(root: Path, release: str) -> dict[str, Any]:
    """Facts and coverage of one release folder (module docstring)."""
    yaml_path = root / YAML
    if not yaml_path.is_file():
        alt = next(iter(root.rglob("native_functions.yaml")), None)
        if alt is None:
            raise ValueError(f"{root}: no native_functions.yaml")
        yaml_path = alt
    by_fn, with_kernel = kernel_ops(yaml_path.read_text(encoding="utf-8"))
    by_stem: dict[str, list[str]] = defaultdict(list)
    for fn, ops in by_fn.items():
        by_stem[_stem(fn)].extend(ops)
    facts: list[Fact] = []
    mps_dir = root / MPS_DIR
    for path in sorted(p for p in mps_dir.rglob("*") if p.suffix in (".mm", ".h", ".cpp")) if mps_dir.is_dir() else ():
        rel_path = path.relative_to(root).as_posix()
        for line, fn, cond, parts in checks_in(path.read_text(encoding="utf-8", errors="replace")):
            kind, dtypes = classify(cond)
            ops = sorted(set(by_fn.get(fn) or by_stem.get(_stem(fn)) or []))
            facts.append(Fact(release, ops, fn or None, kind, cond, _message(parts), dtypes,
                              f"{rel_path}:{line} @ {release}"))
    facts += _common_mps_facts(root, release)
    ops_with = {op for f in facts for op in f.ops}
    dtype_ops = {op for f in facts if f.kind == "common_mps" for op in f.ops}
    coverage = {"mps_kernel_overloads": len(with_kernel),
                "overloads_with_a_fact": len(ops_with & with_kernel),
                "overloads_with_a_common_mps_dtype_fact": len(dtype_ops & with_kernel),
                "checks_read": sum(1 for f in facts if f.kind != "common_mps"),
                "checks_tied_to_an_op": sum(1 for f in facts if f.kind != "common_mps" and f.ops),
                "dtypes_named": sorted({d for f in facts for d in f.dtypes})}
    return {"facts": [asdict(f) for f in facts], "coverage": coverage}


def _common_mps_facts(root: Path, release: str) -> list[Fact]:
    path = root / COMMON_MPS
    if not path.is_file():
        return []
    from mpsready.ops.build import common_mps

    source = path.read_text(encoding="utf-8")
    mapping, _direct = common_mps.load_opinfo_map()
    out = []
    for macos in common_mps.MACOS_POINTS if hasattr(common_mps, "MACOS_POINTS") else ("14.0", "15.0"):
        failing = common_mps.failing_at(common_mps.evaluate(source, macos))
        for key, dtypes in sorted(failing.items()):
            out.append(Fact(release, sorted(mapping.get(key, [])), None, "common_mps",
                            f"OpInfo {key!r} expected to fail on macOS {macos}", "", sorted(dtypes),
                            f"{COMMON_MPS} @ {release}"))
    return out


# ------------------------------------------------------------------ coverage of the shipped data
def shipped_coverage() -> dict[str, dict[str, Any]]:
    """Per shipped release: overloads with an MPS kernel, those with a per-op dtype fact (common_mps.py
    exceptions or conditions in the table, or a check of mps_dtype_checks.yaml / mps_shape_rules.yaml), and the
    dtypes the dtype support table states (mps_dtype_support.yaml) at macOS 15."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from mpsready.ops import api
    from mpsready.ops.build import curated

    checks = curated.load("mps_dtype_checks")
    shape = curated.load("mps_shape_rules")["rules"]
    support = curated.load("mps_dtype_support")["rules"]
    out = {}
    for rel in api.shipped_versions():
        db = api.load_db(rel)
        v = Version(rel)
        curated_ops = {"aten::" + op for kind in ("dtype_checks", "call_checks") for e in checks.get(kind) or ()
                       if v in SpecifierSet(e.get("torch") or "") for op in e["ops"] if op != "*"}
        curated_ops |= {"aten::" + r["op"] for r in shape if v in SpecifierSet(r.get("torch") or "")}
        kernels, with_fact, common = 0, 0, 0
        for key in db.op_names():
            rec = db.raw(key) or {}
            if rec.get("s") != "kernel":
                continue
            kernels += 1
            has_common = bool(rec.get("dx") or rec.get("cond"))
            common += has_common
            with_fact += has_common or ("aten::" + key) in curated_ops
        dtypes = sorted({r["dtype"] for r in support if v in SpecifierSet(r.get("torch") or "")})
        out[rel] = {"mps_kernel_overloads": kernels, "overloads_with_a_dtype_fact": with_fact,
                    "overloads_with_a_common_mps_fact": common, "dtypes_in_support_table": len(dtypes)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mpsready.ops.build.facts", description=__doc__.splitlines()[0])
    ap.add_argument("--sources", metavar="DIR", help="one folder per release (DIR/2.5.1/...), see the docstring")
    ap.add_argument("-o", "--output", metavar="FILE", help="write the mined facts as JSON")
    args = ap.parse_args(argv)
    if not args.sources:
        cov = shipped_coverage()
        print("release  MPS-kernel overloads  with a dtype fact  from common_mps.py  dtypes in the support table")
        for rel, c in cov.items():
            print(f"{rel:8} {c['mps_kernel_overloads']:21} {c['overloads_with_a_dtype_fact']:18} "
                  f"{c['overloads_with_a_common_mps_fact']:19} {c['dtypes_in_support_table']:28}")
        return 0
    root = Path(args.sources)
    if not root.is_dir():
        print(f"facts: {root}: not a folder", file=sys.stderr)
        return 2
    releases: dict[str, Any] = {}
    try:
        for sub in sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.name):
            releases[sub.name] = mine_release(sub, sub.name)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        print(f"facts: {exc}", file=sys.stderr)
        return 2
    if not releases:
        print(f"facts: {root}: no release folder", file=sys.stderr)
        return 2
    print("release  MPS-kernel overloads  with a mined fact  with a common_mps fact  checks read  tied to an op  dtypes")
    for rel, doc in releases.items():
        c = doc["coverage"]
        print(f"{rel:8} {c['mps_kernel_overloads']:21} {c['overloads_with_a_fact']:18} "
              f"{c['overloads_with_a_common_mps_dtype_fact']:23} {c['checks_read']:12} "
              f"{c['checks_tied_to_an_op']:13} {','.join(c['dtypes_named']) or '-'}")
    if args.output:
        Path(args.output).write_text(json.dumps({"schema": SCHEMA, "releases": releases}, indent=1) + "\n",
                                     encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

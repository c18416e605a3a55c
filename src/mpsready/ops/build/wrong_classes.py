"""Decide, release by release, which classes of silent MPS wrong results apply (issue 33; maintainers only, never
at run time).

    PYTHONPATH=src python -m mpsready.ops.build.wrong_classes --wheels DIR \\
        -o src/mpsready/ops/data/mined/mps_wrong_classes.json
    PYTHONPATH=src python -m mpsready.ops.build.wrong_classes          # coverage of the shipped file

``data/curated/mps_wrong_classes.yaml`` names each class: its ops, dtypes, the value or layout condition a call must
meet, the release bound its fix sets (``torch``, with ``how``: read in the fix PR's thread, or inferred from its
merge date) and its ``evidence``: checks read in each release's own material, all of which must hold there:

* ``kernel: OP``: the release's shipped support table (``data/tables/torch-V.json.gz``, itself built from that
  release's wheel) gives OP an MPS kernel;
* ``binary: TEXT``: the release's macOS ``torch/lib/libtorch_cpu.dylib`` carries TEXT (the name under which the host
  code looks up the Metal kernel that computes the wrong value);
* ``binary_absent: TEXT``: the binary does not carry TEXT (the op still runs on the MPSGraph path the report is
  about, not on the Metal kernel that later replaced it);
* ``inductor_decomposes: NAME``: ``torch/_inductor/codegen/mps.py`` has no method NAME on ``MetalOverrides`` and
  ``torch/_inductor/codegen/common.py`` defines NAME (its generic decomposition), both read with :mod:`ast`.

``DIR`` holds the releases' macOS arm64 wheels as ``pip download torch==V --no-deps --only-binary=:all: --platform
macosx_14_0_arm64`` (``macosx_11_0_arm64`` before 2.12) leaves them (``fetch.download``); a wheel is read in place
(zip members), never unpacked or imported. A release without its wheel in ``DIR`` is judged on its table and bound
only where no check needs the wheel, and is otherwise left out (the output says which). The output (schema
``mpsready.wrong-classes`` v1) holds, per class, the releases it applies to and, per release, each check's result;
per release the wheel's name and sha256. Nothing is carried from one release to another: every release is read in
its own files (``range: read``); the bound of the fix is as ``how`` says.

The coverage printed (and in docs/emulation.md): per release, the classes that apply, the aten overloads they reach
and the dtypes they name, next to the per-bug table's (``mps_wrong_results.yaml``) overloads.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from mpsready.ops.build import curated
from mpsready.ops.build.builder import RELEASES

SCHEMA = {"name": "mpsready.wrong-classes", "version": 1}
CLASSES = "mps_wrong_classes"
MINED = Path(__file__).resolve().parents[1] / "data" / "mined" / "mps_wrong_classes.json"
DYLIB = "torch/lib/libtorch_cpu.dylib"
INDUCTOR_MPS = "torch/_inductor/codegen/mps.py"
INDUCTOR_COMMON = "torch/_inductor/codegen/common.py"
CHECKS = ("kernel", "binary", "binary_absent", "inductor_decomposes")


def classes() -> list[dict[str, Any]]:
    """The class definitions of ``mps_wrong_classes.yaml``; raises ``ValueError`` on an evidence check outside
    ``CHECKS`` or a class without ``how``."""
    doc = curated.load(CLASSES)
    out = list(doc["classes"])
    for c in out:
        for ev in c.get("evidence") or ():
            if len(ev) != 1 or next(iter(ev)) not in CHECKS:
                raise ValueError(f"{CLASSES}.yaml class {c['id']!r}: evidence {ev!r} (known: {', '.join(CHECKS)})")
        if not c.get("how"):
            raise ValueError(f"{CLASSES}.yaml class {c['id']!r}: lacks 'how'")
    return out


def _methods(tree: ast.Module, cls: str | None) -> set[str]:
    """Method names of class ``cls`` in ``tree`` (None: of every class)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and (cls is None or node.name == cls):
            out.update(f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return out


class Wheel:
    """One release's wheel, read in place: members on demand, each read at most once."""

    def __init__(self, path: Path):
        self.path = path
        self._zf = zipfile.ZipFile(path)
        self._names = set(self._zf.namelist())
        self._dylib: bytes | None = None
        self._trees: dict[str, ast.Module | None] = {}

    def sha256(self) -> str:
        h = hashlib.sha256()
        with open(self.path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()

    def carries(self, text: str) -> bool:
        if self._dylib is None:
            self._dylib = self._zf.read(DYLIB) if DYLIB in self._names else b""
        return text.encode() in self._dylib

    def tree(self, member: str) -> ast.Module | None:
        if member not in self._trees:
            self._trees[member] = (ast.parse(self._zf.read(member).decode("utf-8")) if member in self._names
                                   else None)
        return self._trees[member]

    def inductor_decomposes(self, name: str) -> bool:
        mps, common = self.tree(INDUCTOR_MPS), self.tree(INDUCTOR_COMMON)
        if mps is None or common is None:  # no Metal back-end (before 2.7): nothing compiles on MPS
            return False
        return name not in _methods(mps, "MetalOverrides") and name in _methods(common, None)


def find_wheel(folder: Path, release: str) -> Path | None:
    """``torch-<release>-*.whl`` (or a build-tagged ``torch-<release>-2-...``) with a macOS tag in ``folder``."""
    for p in sorted(folder.glob(f"torch-{release}-*.whl")):
        if "macosx" in p.name:
            return p
    return None


def evaluate(release: str, cls: dict[str, Any], wheel: Wheel | None) -> tuple[bool | None, list[dict[str, Any]]]:
    """Whether ``cls`` applies to ``release`` (None: a check needs the wheel and there is none) and each check's
    result (``bound`` first: the fix's release bound)."""
    from mpsready.ops import api

    results: list[dict[str, Any]] = []
    spec = cls.get("torch")
    bound = spec is None or Version(release) in SpecifierSet(spec, prereleases=True)
    results.append({"check": "bound", "value": spec or "no fix recorded", "holds": bound})
    verdict: bool | None = bound
    db = api.load_db(release)
    for ev in cls.get("evidence") or ():
        (kind, value), = ev.items()
        if kind == "kernel":
            holds: bool | None = value in db and db.lookup(value).runs_on_mps
        elif wheel is None:
            holds = None
        elif kind == "binary":
            holds = wheel.carries(value)
        elif kind == "binary_absent":
            holds = not wheel.carries(value)
        else:
            holds = wheel.inductor_decomposes(value)
        results.append({"check": kind, "value": value, "holds": holds})
        if holds is False:
            verdict = False
        elif holds is None and verdict:
            verdict = None
    return verdict, results


def build(wheels: Path | None, releases: tuple[str, ...] = RELEASES) -> dict[str, Any]:
    """Evaluate every class against every release (module docstring); returns the output document."""
    defs = classes()
    out: dict[str, Any] = {"schema": SCHEMA, "how": "each check read in the release's own table, binary or Inductor "
                           "source (range 'read'); the bound of the fix as each class's 'how' says",
                           "wheels": {}, "unread": [], "classes": {c["id"]: {"releases": [], "evidence": {}}
                                                                 for c in defs}}
    for rel in releases:
        path = find_wheel(wheels, rel) if wheels is not None else None
        wheel = Wheel(path) if path is not None else None
        if path is not None and wheel is not None:
            out["wheels"][rel] = {"wheel": path.name, "sha256": wheel.sha256()}
        for c in defs:
            verdict, results = evaluate(rel, c, wheel)
            entry = out["classes"][c["id"]]
            entry["evidence"][rel] = results
            if verdict:
                entry["releases"].append(rel)
            elif verdict is None:
                out["unread"].append(f"{c['id']} @ {rel}")
    return out


def coverage(doc: dict[str, Any], releases: tuple[str, ...] = RELEASES) -> dict[str, dict[str, Any]]:
    """Per release: ``classes`` (that apply), ``ops`` (aten overloads they reach), ``dtypes`` (named),
    ``per_bug_ops`` (overloads of mps_wrong_results.yaml in range) and ``ops_in_all`` (the union)."""
    from mpsready.ops.advisories import load_curated

    defs = {c["id"]: c for c in classes()}
    table = load_curated()
    out: dict[str, dict[str, Any]] = {}
    for rel in releases:
        hit = [defs[i] for i, e in doc["classes"].items() if rel in e["releases"] and i in defs]
        ops = {o for c in hit for o in c["op"]}
        per_bug = {o for a in table if Version(rel) in SpecifierSet(a.torch, prereleases=True) for o in a.ops}
        out[rel] = {"classes": len(hit), "ops": len(ops), "dtypes": sorted({d for c in hit for d in c.get("dtypes") or
                                                                           ("any",)}),
                    "per_bug_ops": len(per_bug), "ops_in_all": len(ops | per_bug),
                    "families": sorted({c["class"] for c in hit})}
    return out


def print_coverage(doc: dict[str, Any]) -> None:
    print(f"{len(doc['classes'])} classes; releases without a wheel read: {len(doc.get('unread') or [])} "
          "class-release pairs left out")
    print("release  classes  overloads (classes)  overloads (per-bug table)  overloads in all  families")
    for rel, c in coverage(doc).items():
        print(f"{rel:8} {c['classes']:7} {c['ops']:20} {c['per_bug_ops']:26} {c['ops_in_all']:17}  "
              f"{', '.join(c['families'])}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mpsready.ops.build.wrong_classes",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--wheels", type=Path, help="folder of the releases' macOS wheels (module docstring)")
    ap.add_argument("-o", "--out", type=Path, help="write the document here")
    args = ap.parse_args(argv)
    if args.wheels is None:
        if not MINED.exists():
            print(f"no {MINED.name}: build it with --wheels", file=sys.stderr)
            return 2
        print_coverage(json.loads(MINED.read_text(encoding="utf-8")))
        return 0
    if not args.wheels.is_dir():
        print(f"{args.wheels}: not a folder", file=sys.stderr)
        return 2
    doc = build(args.wheels)
    if args.out:
        args.out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print_coverage(doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

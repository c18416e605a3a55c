"""Mine, per release, the public Python names of the modules a program reads on a Mac path (maintainers only).

    PYTHONPATH=src python -m mpsready.ops.build.api_names [--releases 2.4.0 ...] [--cache DIR] [--refresh]

(also ``python -m mpsready.ops.build --api-names``). For each release V (``RELEASES``: 2.2.2 to 2.14.1), ``pip
download`` the macOS arm64 wheel into a temporary folder (:func:`mpsready.ops.build.fetch.download`), read its
``torch/**.py`` and ``torch/**.pyi`` members with ``zipfile`` and parse them with ``ast`` (nothing is imported or
run), record the wheel's file name and sha256, delete the wheel, and cache only the small result
(``<cache>/V.json``). Then write ``ops/data/mined/api_names.json.gz``: per module, the names of the first release
and, per later release, the names added and removed against it; the modules a release's files do not let us
read completely are listed as such (``unknown``), and nothing is hidden there.

What a module "may have" (:func:`ModuleReader.names`) is an over-approximation of the names its import can bind,
read from module level (the bodies of ``if``/``try``/``with``/``for``, not of functions and classes):

* defs, classes, assignments, imports (``import a.b as c``, ``from x import y``), ``global`` names of functions;
* ``from m import *``: every public name of ``m`` (read the same way; its ``.pyi`` stub for ``torch._C`` and its
  submodules, the only static record of what the C extension binds);
* a package's submodules and subpackages (any member of the wheel one level below it: an import anywhere binds
  them as attributes);
* ``globals()[k] = ...`` with ``k`` a string constant, a private name (``f"_sym_{...}"``, ``"_" + ...``), a
  loop variable over a tuple of strings, or over ``dir(M)`` with ``M`` readable (torch's
  ``for __name in dir(_C._VariableFunctions)``): those names;
* a module ``__getattr__`` (torch's lazy submodules and deprecated names): every identifier-like string constant
  of the file.

Anything else that binds names at run time (``globals().update``, ``setattr`` on the module itself with a name
not written in the file, ``exec``, ``from m import *`` of a module that cannot be read) makes the module
``unknown`` for that release. The emulator hides a name only where both the target's and the installed
release's modules are known (:mod:`mpsready.ops.api_names`): never a false failure from a name the reading missed.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpsready.astnames import dotted
from mpsready.ops.build import fetch

# The modules a program reads on a Mac path (issue 33, builder h33f).
MODULES = ("torch", "torch.mps", "torch.backends.mps", "torch.amp", "torch.accelerator", "torch.nn",
           "torch.nn.functional", "torch.nn.attention", "torch.cuda.amp", "torch.cpu.amp", "torch.utils.data",
           "torch.compiler", "torch.nn.utils", "torch.optim", "torch.distributed")
RELEASES = ("2.2.2", "2.3.0", "2.3.1", "2.4.0", "2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.7.0", "2.7.1", "2.8.0",
            "2.9.0", "2.9.1", "2.10.0", "2.11.0", "2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1")
MAC_PLATFORMS = ("macosx_14_0_arm64", "macosx_11_0_arm64")
OUT = Path(__file__).resolve().parents[1] / "data" / "mined" / "api_names.json.gz"
SCHEMA = {"name": "mpsready-api-names", "version": 1}
# bump when the reading changes: cached results of another version are read again
READER_VERSION = 3
# the C extension's bindings: its stubs (torch/_C/*.pyi) miss some (2.13's torch.AVG, torch.ArgumentSpec), so a
# name the stubs give one release and not another is checked against the other's library strings
PYTHON_LIBRARY = ("torch/lib/libtorch_python.dylib", "torch/lib/libtorch_python.so")


@dataclass
class Names:
    """What a module may bind: public ``names``; ``known`` False with ``why`` where the files cannot say."""

    names: set[str] = field(default_factory=set)
    known: bool = True
    why: list[str] = field(default_factory=list)

    def unknown(self, reason: str) -> None:
        self.known = False
        if reason not in self.why:
            self.why.append(reason)


def public(name: str) -> bool:
    return bool(name) and not name.startswith("_")


class ModuleReader:
    """Reads modules out of one wheel's Python files (``files``: member path -> bytes; ``members``: every member
    path of the wheel, for the submodules of a package)."""

    def __init__(self, files: dict[str, bytes], members: list[str], stubs: bool = True):
        self.files = files if stubs else {k: v for k, v in files.items() if not k.endswith(".pyi")}
        self.members = members
        self._memo: dict[str, Names] = {}
        self._busy: set[str] = set()

    # ------------------------------------------------------------------ files
    def path_of(self, modname: str) -> str | None:
        base = modname.replace(".", "/")
        for cand in (f"{base}.py", f"{base}/__init__.py", f"{base}.pyi", f"{base}/__init__.pyi"):
            if cand in self.files:
                return cand
        return None

    def children(self, modname: str) -> set[str]:
        """Names of the members one level below package ``modname`` (submodules, subpackages, extensions)."""
        prefix = modname.replace(".", "/") + "/"
        out = set()
        for m in self.members:
            if m.startswith(prefix):
                rest = m[len(prefix):]
                head = rest.split("/", 1)[0]
                stem = head.split(".", 1)[0]
                if stem.isidentifier() and stem != "__init__":
                    out.add(stem)
        return out

    # ------------------------------------------------------------------ reading
    def names(self, modname: str) -> Names:
        if modname in self._memo:
            return self._memo[modname]
        if modname in self._busy:  # a star-import cycle: say nothing rather than half
            out = Names()
            out.unknown(f"star-import cycle through {modname}")
            return out
        self._busy.add(modname)
        try:
            out = self._read(modname)
        finally:
            self._busy.discard(modname)
        self._memo[modname] = out
        return out

    def _read(self, modname: str) -> Names:
        out = Names()
        path = self.path_of(modname)
        if path is None:
            out.unknown(f"no Python file or stub for {modname}")
            return out
        tree = ast.parse(self.files[path].decode("utf-8"), filename=path)
        package = modname if path.endswith(("__init__.py", "__init__.pyi")) else modname.rpartition(".")[0]
        if path.endswith(("__init__.py", "__init__.pyi")):
            out.names |= {n for n in self.children(modname) if public(n)}
        _ModuleLevel(self, modname, package, out).visit_body(tree.body, [])
        for node in ast.walk(tree):  # names a function declares global are bound at module level
            if isinstance(node, ast.Global):
                out.names |= {n for n in node.names if public(n)}
        return out

    def resolve(self, package: str, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        parts = package.split(".")
        base = ".".join(parts[:len(parts) - (level - 1)]) if level > 1 else package
        return f"{base}.{module}" if module else base

    def dotted(self, package: str, expr: ast.expr) -> str | None:
        """``_C._VariableFunctions`` inside ``torch`` -> ``torch._C._VariableFunctions`` (a readable module)."""
        name = dotted(expr)
        if name is None:
            return None
        for cand in (f"{package}.{name}", name):
            if self.path_of(cand) is not None:
                return cand
        return None


def _strings(tree: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and n.value.isidentifier()}


def _private_key(key: ast.expr) -> bool:
    """A ``globals()`` key that can only be a private name (``f"_sym_{n}"``, ``"_" + n``)."""
    if isinstance(key, ast.JoinedStr) and key.values:
        first = key.values[0]
        return isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("_")
    if isinstance(key, ast.BinOp) and isinstance(key.op, ast.Add):
        left = key.left
        return isinstance(left, ast.Constant) and isinstance(left.value, str) and left.value.startswith("_")
    return False


def _is_globals(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("globals", "vars")
            and not node.args)


def _is_self_module(node: ast.AST) -> bool:
    """``sys.modules[__name__]``."""
    return (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name) and node.slice.id == "__name__"
            and isinstance(node.value, ast.Attribute) and node.value.attr == "modules")


class _ModuleLevel:
    """One module's top-level statements (and those nested in if/try/with/for/while), binding into ``out``."""

    def __init__(self, reader: ModuleReader, modname: str, package: str, out: Names):
        self.reader = reader
        self.modname = modname
        self.package = package
        self.out = out
        self.self_aliases: set[str] = set()
        self.private_vars: set[str] = set()  # names last assigned a private name (__sym_name = f"_sym_{__name}")

    def bind(self, target: ast.expr) -> None:
        if isinstance(target, ast.Name):
            if public(target.id):
                self.out.names.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self.bind(t)
        elif isinstance(target, ast.Starred):
            self.bind(target.value)

    def visit_body(self, body: list[ast.stmt], loops: list[ast.For]) -> None:
        for stmt in body:
            self.visit(stmt, loops)

    def visit(self, stmt: ast.stmt, loops: list[ast.For]) -> None:  # noqa: C901 - one case per statement kind
        out = self.out
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if public(stmt.name):
                out.names.add(stmt.name)
            if stmt.name == "__getattr__" and not isinstance(stmt, ast.ClassDef):
                path = self.reader.path_of(self.modname)
                assert path is not None
                out.names |= {s for s in _strings(ast.parse(self.reader.files[path])) if public(s)}
                out.why.append("module __getattr__: bounded by the file's string constants")
            return
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                bound = a.asname or a.name.split(".")[0]
                if public(bound):
                    out.names.add(bound)
            return
        if isinstance(stmt, ast.ImportFrom):
            source = self.reader.resolve(self.package, stmt.module, stmt.level)
            for a in stmt.names:
                if a.name == "*":
                    star = self.reader.names(source)
                    out.names |= star.names
                    if not star.known:
                        out.unknown(f"from {source} import *: " + "; ".join(star.why))
                elif public(a.asname or a.name):
                    out.names.add(a.asname or a.name)
            return
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                self.bind(t)
                if isinstance(t, ast.Subscript) and _is_globals(t.value):
                    self.globals_key(t.slice, loops)
                if isinstance(t, ast.Name) and stmt.value is not None and _is_self_module(stmt.value):
                    self.self_aliases.add(t.id)
                if isinstance(t, ast.Name) and stmt.value is not None:
                    (self.private_vars.add if _private_key(stmt.value) else self.private_vars.discard)(t.id)
            self.scan_expr(stmt)
            return
        if isinstance(stmt, ast.For):
            self.bind(stmt.target)
            self.visit_body(stmt.body, [*loops, stmt])
            self.visit_body(stmt.orelse, loops)
            return
        if isinstance(stmt, (ast.If, ast.While)):
            self.scan_expr(stmt.test)
            self.visit_body(stmt.body, loops)
            self.visit_body(stmt.orelse, loops)
            return
        if isinstance(stmt, ast.With):
            for item in stmt.items:
                if item.optional_vars is not None:
                    self.bind(item.optional_vars)
            self.visit_body(stmt.body, loops)
            return
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self.visit_body(stmt.body, loops)  # type: ignore[attr-defined]
            for h in stmt.handlers:  # type: ignore[attr-defined]
                if h.name and public(h.name):
                    out.names.add(h.name)
                self.visit_body(h.body, loops)
            self.visit_body(stmt.orelse, loops)  # type: ignore[attr-defined]
            self.visit_body(stmt.finalbody, loops)  # type: ignore[attr-defined]
            return
        if isinstance(stmt, ast.Match):
            out.unknown("module-level match statement")
            return
        self.scan_expr(stmt)

    def globals_key(self, key: ast.expr, loops: list[ast.For]) -> None:
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            if public(key.value):
                self.out.names.add(key.value)
            return
        if _private_key(key):
            return
        if isinstance(key, ast.Name):
            # a loop variable first (torch's `__name` over dir(_C._VariableFunctions), reassigned "_" + __name
            # inside the loop for one name): every name the loop can give
            for loop in reversed(loops):
                if isinstance(loop.target, ast.Name) and loop.target.id == key.id:
                    it = loop.iter
                    if isinstance(it, (ast.Tuple, ast.List)) and all(
                            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in it.elts):
                        self.out.names |= {e.value for e in it.elts if public(e.value)}  # type: ignore[attr-defined]
                        return
                    if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "dir"
                            and len(it.args) == 1):
                        mod = self.reader.dotted(self.package, it.args[0])
                        if mod is not None:
                            got = self.reader.names(mod)
                            self.out.names |= got.names
                            self.out.why.append(f"globals() set from dir({mod}): its names, read in its file or stub")
                            if not got.known:
                                self.out.unknown(f"globals() set from dir({mod}): " + "; ".join(got.why))
                            return
                    break
            else:
                if key.id in self.private_vars:
                    return
        self.out.unknown(f"globals()[{ast.unparse(key)}] = ... (line {key.lineno})")

    def scan_expr(self, node: ast.AST) -> None:
        """Calls in a module-level statement that bind names the reading cannot see."""
        for n in ast.walk(node):
            if isinstance(n, (ast.Lambda, ast.FunctionDef)):
                continue
            if not isinstance(n, ast.Call):
                continue
            f = n.func
            if isinstance(f, ast.Name) and f.id in ("exec", "eval") and n.args:
                self.out.unknown(f"{f.id}(...) at module level (line {n.lineno})")
            elif isinstance(f, ast.Attribute) and f.attr == "update" and _is_globals(f.value):
                self.out.unknown(f"globals().update(...) (line {n.lineno})")
            elif isinstance(f, ast.Name) and f.id == "setattr" and len(n.args) >= 2:
                obj, key = n.args[0], n.args[1]
                if _is_self_module(obj) or (isinstance(obj, ast.Name) and obj.id in self.self_aliases):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        if public(key.value):
                            self.out.names.add(key.value)
                    elif not (_private_key(key) or (isinstance(key, ast.Name) and key.id in self.private_vars)):
                        self.out.unknown(f"setattr on the module itself (line {n.lineno})")


def _function_globals(tree: ast.Module) -> set[str]:
    """Names loaded inside the file's functions and lambdas (an over-approximation of the globals they read: a
    local of the same name counts too)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                    out.add(sub.id)
    return out


# ---------------------------------------------------------------------------------------------- one wheel
def read_wheel(wheel: Path) -> dict[str, Any]:
    """``{"wheel": name, "sha256": ..., "modules": {module: {"names": [...], "known": bool, "why": [...]}}}``."""
    with zipfile.ZipFile(wheel) as zf:
        members = zf.namelist()
        files = {m: zf.read(m) for m in members
                 if m.startswith("torch/") and m.endswith((".py", ".pyi"))}
        lib = next((zf.read(m) for m in PYTHON_LIBRARY if m in members), b"")
    reader = ModuleReader(files, members)
    python_only = ModuleReader(files, members, stubs=False)
    modules = {}
    for mod in MODULES:
        got = reader.names(mod)
        if reader.path_of(mod) is None:  # the release has no such module (torch.accelerator before 2.6)
            modules[mod] = {"names": [], "known": True, "why": ["absent: no file in the wheel"], "absent": True}
            continue
        path = reader.path_of(mod)
        assert path is not None
        modules[mod] = {"names": sorted(got.names), "known": got.known, "why": sorted(set(got.why)),
                        # names the module's own functions read as globals: the emulator cannot take them out of
                        # the installed module's __dict__ (NameError inside torch), so they are never hidden
                        "globals": sorted(_function_globals(ast.parse(files[path])) & got.names),
                        # names only the C extension's stubs give (through from torch._C import *, dir() loops)
                        "c_only": sorted(got.names - python_only.names(mod).names)}
    strings = {s.decode("ascii") for s in lib.split(b"\0") if 0 < len(s) <= 80 and s.isascii()}
    return {"reader": READER_VERSION, "wheel": wheel.name, "sha256": fetch.sha256_of(wheel), "modules": modules,
            "library_strings": sorted(s for s in strings if s.isidentifier() and public(s))}


def mine_release(release: str, cache: Path, refresh: bool = False) -> dict[str, Any]:
    """The cached result of ``release`` (``<cache>/<release>.json``), else download, read, delete the wheel."""
    cached = cache / f"{release}.json"
    if cached.exists() and not refresh:
        doc = json.loads(cached.read_text())
        if doc.get("reader") == READER_VERSION:
            return doc
    with tempfile.TemporaryDirectory(prefix="mpsready-wheel-") as tmp:
        wheel = fetch.download(release, Path(tmp), MAC_PLATFORMS)
        doc = read_wheel(wheel)
    doc["release"] = release
    cache.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(doc, indent=0, sort_keys=True))
    return doc


# ---------------------------------------------------------------------------------------------- the table
def build_table(docs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The shipped document: names of the first release, per later release the names added/removed ("+x"/"-x")."""
    releases = list(docs)
    base = releases[0]
    # a name some release has only from the C extension's stubs: a release whose stubs lack it but whose
    # libtorch_python holds it as a string may bind it all the same (an unstubbed binding): counted as present
    c_only = {m: set().union(*(docs[r]["modules"][m].get("c_only", ()) for r in releases)) for m in MODULES}
    for r in releases:
        strings = set(docs[r].get("library_strings", ()))
        for m in MODULES:
            mod = docs[r]["modules"][m]
            extra = (c_only[m] & strings) - set(mod["names"])
            if extra and not mod.get("absent"):
                mod["names"] = sorted(set(mod["names"]) | extra)
                mod.setdefault("why", []).append(f"{len(extra)} names of other releases' C stubs found in its "
                                                 "libtorch_python strings: counted as present")
    base_names = {m: docs[base]["modules"][m]["names"] for m in MODULES}
    diff: dict[str, dict[str, list[str]]] = {}
    unknown: dict[str, dict[str, str]] = {}
    absent: dict[str, list[str]] = {}
    for r in releases:
        mods = docs[r]["modules"]
        for m in MODULES:
            names = set(mods[m]["names"])
            b = set(base_names[m])
            d = sorted([f"+{n}" for n in names - b] + [f"-{n}" for n in b - names], key=lambda s: (s[1:], s[0]))
            if d and r != base:
                diff.setdefault(r, {})[m] = d
            if not mods[m]["known"]:
                unknown.setdefault(r, {})[m] = "; ".join(mods[m]["why"])
            if mods[m].get("absent"):
                absent.setdefault(r, []).append(m)
    # per release, the names its modules' functions read as globals, among the names some release lacks
    varying = {m: set().union(*(set(docs[r]["modules"][m]["names"]) for r in releases))
               - set.intersection(*(set(docs[r]["modules"][m]["names"]) for r in releases)) for m in MODULES}
    read_as_globals: dict[str, dict[str, list[str]]] = {}
    for r in releases:
        for m in MODULES:
            g = sorted(set(docs[r]["modules"][m].get("globals", ())) & varying[m])
            if g:
                read_as_globals.setdefault(r, {})[m] = g
    return {
        "schema": SCHEMA,
        "read_as_globals": read_as_globals,
        "source": ("public names each module may bind, read with ast (never imported) from the torch/**.py and "
                   "torch/_C/*.pyi members of each release's macOS arm64 wheel on PyPI (file name and sha256 "
                   "below); method: mpsready/ops/build/api_names.py"),
        "modules": list(MODULES),
        "releases": releases,
        "wheels": {r: {"name": docs[r]["wheel"], "sha256": docs[r]["sha256"]} for r in releases},
        "base": base,
        "base_names": base_names,
        "diff": diff,
        "unknown": unknown,
        "absent": absent,
    }


def release_names(table: dict[str, Any], release: str, module: str) -> set[str]:
    names = set(table["base_names"][module])
    for entry in table["diff"].get(release, {}).get(module, ()):
        (names.add if entry[0] == "+" else names.discard)(entry[1:])
    return names


def coverage(table: dict[str, Any], installed: str = "2.13.0") -> list[str]:
    """Per release, per module: how many of the installed release's names it lacks (``n``; ``n+k``: ``k`` more
    that the installed module's functions read as globals, not hidden), and ``?`` where the module is not fully
    known in that release or the installed one (nothing is hidden there)."""
    lines = []
    mods = table["modules"]
    short = {m: m.replace("torch.", "").replace("backends.", "b.") for m in mods}
    lines.append("release  " + " ".join(f"{short[m]:>9}" for m in mods))
    for r in table["releases"]:
        cells = []
        for m in mods:
            if m in table["unknown"].get(r, {}) or m in table["unknown"].get(installed, {}):
                cells.append(f"{'?':>9}")
                continue
            lacks = release_names(table, installed, m) - release_names(table, r, m)
            kept = lacks & set(table.get("read_as_globals", {}).get(installed, {}).get(m, ()))
            cells.append(f"{len(lacks) - len(kept)}+{len(kept)}".rjust(9) if kept else f"{len(lacks):>9}")
        lines.append(f"{r:<8} " + " ".join(cells))
    return lines


def write_gz(doc: dict[str, Any], path: Path) -> None:
    data = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:  # mtime=0: identical input gives identical bytes
        with gzip.GzipFile(fileobj=fh, mode="wb", compresslevel=9, mtime=0) as gz:
            gz.write(data)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mpsready.ops.build.api_names", description=__doc__.splitlines()[0])
    ap.add_argument("--releases", nargs="+", default=list(RELEASES))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/mpsready-api-names"))
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--refresh", action="store_true", help="read every wheel again (ignore the cached results)")
    args = ap.parse_args(argv)
    docs = {}
    for r in args.releases:
        doc = mine_release(r, args.cache, args.refresh)
        docs[r] = doc
        unknown = [m for m, v in doc["modules"].items() if not v["known"]]
        print(f"{r}: {doc['wheel']} sha256 {doc['sha256'][:12]}; "
              f"{sum(len(v['names']) for v in doc['modules'].values())} names; not fully known: {unknown or 'none'}",
              flush=True)
    table = build_table(docs)
    write_gz(table, args.out)
    installed = "2.13.0" if "2.13.0" in docs else list(docs)[-1]
    print(f"names each release lacks of {installed}'s (n+k: k more read as globals by {installed}'s functions, "
          "not hidden; ? = not fully known, nothing hidden):")
    for line in coverage(table, installed):
        print(line)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

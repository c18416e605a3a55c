"""The fallback passes of the scan: CUDA sources (EXT101) per directory, and kernels, extensions and CUDA-package
imports lowered to degrades when every import of them elsewhere in the project sits under a try/except with a
fallback (directly, or inside a function called only under one); a project that is itself a CUDA package is
judged by its kernels, not by importing itself (DEP107 dropped).

``results`` maps a relative path to (:class:`~mpsready.scan.code.result.CodeResult`, cells) throughout.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import PurePosixPath

from mpsready.findings import Finding, Location, Scope, Severity
from mpsready.scan.code.astutil import is_fallback_handler, spans_a_line
from mpsready.scan.model.reread import SourceTrees
from mpsready.scan.rules import extensions as E
from mpsready.scan.scope import scope_of
from mpsready.scan.walker import ProjectFile

KERNEL_CODES = {"EXT103", "EXT104", "EXT105", "EXT106"}


def cuda_sources(files: list[ProjectFile], results) -> list[Finding]:
    """EXT101, one per directory of .cu/.cuh files; lowered when every file there is built by Python code
    that catches the build failure and falls back (``try: plugin = load(...) except: use the reference``)."""
    refs: dict[str, list[tuple[str, int, int | None]]] = {}
    for rel, (res, _cells) in results.items():
        for ref in res.cu_refs:
            refs.setdefault(ref.name, []).append((rel, ref.line, ref.fallback_line))
    by_dir: dict[str, list[str]] = {}
    metal: dict[str, str] = {}  # a directory -> a Metal source in it
    for pf in files:
        if pf.cuda:
            by_dir.setdefault(str(PurePosixPath(pf.relpath).parent), []).append(pf.relpath)
        elif getattr(pf, "metal", False):
            metal.setdefault(str(PurePosixPath(pf.relpath).parent), pf.relpath)
    out = []
    for d, paths in sorted(by_dir.items()):
        where = "the project root" if d == "." else f"{d}/"
        evidence: dict = {"files": len(paths), "no_alternative": True}
        severity = E.CUDA_SOURCES.severity
        message = f"{len(paths)} CUDA source file(s) in {where}: need nvcc and an NVIDIA GPU"
        fallback = None
        if d in metal:
            # issue 32: the kernel ships a Metal implementation beside the CUDA one (`kernel.cu` and `kernel.metal` /
            # `kernel.mm` in one source folder): the extension has a Mac build, the CUDA sources are not the Mac's
            out.append(Finding(
                code=E.CUDA_SOURCES.code, severity=Severity.INFO,
                message=f"{message}; a Metal implementation beside them ({metal[d]}) is the Mac's build",
                location=Location(path=sorted(paths)[0]), fix=E.CUDA_SOURCES.fix, source=E.CUDA_SOURCES.source,
                scope=scope_of(paths[0]), evidence={"files": len(paths), "metal": metal[d]}))
            continue
        guards = []
        for p in paths:
            name = p.rsplit("/", 1)[-1]
            guarded = [(rel, g) for rel, _line, g in refs.get(name, ()) if g]
            if not name.endswith(".cuh"):  # headers are built through the .cu files that include them
                guards.append(guarded[0] if guarded else None)
        first = guards[0] if guards else None
        if first is not None and all(guards):
            rel, line = first
            evidence, fallback = {"files": len(paths)}, f"{rel}:{line}"
            severity = Severity.DEGRADES
            message += f"; built under try/except with a fallback ({rel}:{line})"
        out.append(Finding(
            code=E.CUDA_SOURCES.code, severity=severity, message=message, location=Location(path=sorted(paths)[0]),
            fix=E.CUDA_SOURCES.fix, source=E.CUDA_SOURCES.source, scope=scope_of(paths[0]), evidence=evidence,
        ).with_state(fallback=fallback))
    return out


def module_name(relpath: str) -> str:
    """Dotted module name of a .py path relative to the root (``pkg/__init__.py`` -> ``pkg``)."""
    parts = list(PurePosixPath(relpath).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(results) -> tuple[dict[str, list], dict[str, list]]:
    """Imported modules -> sites, and from-imports ``module -> [(names, site)]``, relative imports resolved.

    A site is ``(importing file, line, guard)``: the guard is True under a try/except fallback, the name of
    the enclosing function when every call of it in that file is under one, else False.
    """
    modules: dict[str, list] = {}
    froms: dict[str, list] = {}
    for rel, (res, _cells) in results.items():
        if not res.imports:
            continue
        pkg = module_name(rel).split(".")
        if not rel.endswith("__init__.py"):
            pkg = pkg[:-1]
        for imp in res.imports:
            if imp.level:
                base = pkg[:len(pkg) - (imp.level - 1)] if imp.level - 1 <= len(pkg) else []
                full = ".".join([*base, *([imp.module] if imp.module else [])])
            else:
                full = imp.module
            site = (rel, imp.line, imp.guard)
            modules.setdefault(full, []).append(site)
            if imp.names:
                froms.setdefault(full, []).append((imp.names, site))
    return modules, froms


class _ImportIndex:
    """Find importers of a module by exact name or dotted suffix (``pkg.mod`` matches ``src.pkg.mod``
    and ``mod``), including ``from pkg import mod``, without indexing every imported name."""

    def __init__(self, imports: tuple[dict[str, list], dict[str, list]]) -> None:
        self.modules, self.froms = imports
        self._suffix: dict[str, list] | None = None

    def _by_suffix(self) -> dict[str, list]:
        if self._suffix is None:
            self._suffix = {}
            for name, sites in self.modules.items():
                parts = name.split(".")
                for i in range(1, len(parts)):
                    self._suffix.setdefault(".".join(parts[i:]), []).extend(sites)
        return self._suffix

    def importers(self, module: str) -> list[tuple[str, int, bool]]:
        parts = module.split(".")
        hits = list(self.modules.get(module, ())) + list(self._by_suffix().get(module, ()))
        for i in range(1, len(parts)):  # an import of a shorter name that the module's path ends with
            hits += self.modules.get(".".join(parts[i:]), ())
        for i in range(len(parts) - 1):  # from <parent> import <child>
            parent, child = ".".join(parts[i:-1]), parts[-1]
            hits += [site for names, site in self.froms.get(parent, ()) if child in names]
        return hits


def _lower(f: Finding, why: str) -> Finding:
    """``f`` lowered to degrades by the fallback ``why``: it has an alternative after all."""
    return dataclasses.replace(f, severity=Severity.DEGRADES, message=f"{f.message}; fallback: {why}").with_evidence(
        {k: v for k, v in f.evidence.items() if k != "no_alternative"}).with_state(fallback=why)


def resolve_fallbacks(findings: list[Finding], results, sources: SourceTrees | None = None) -> list[Finding]:
    """Lower kernels and extensions whose every import elsewhere in the project is guarded by a fallback."""
    index = _ImportIndex(_imports(results))

    def guarded(site: tuple[str, int, bool | str]) -> bool:
        # a str guard names the function the import sits in, called only under a fallback in its own
        # file: that holds while every other main-scope file importing the function calls it only under
        # try/except with a fallback too (sam2's transforms.py around get_connected_components); tests calling
        # it (whisper's test_timing.py) run on CUDA tensors anyway (API101 there)
        rel, _line, g = site
        if isinstance(g, str):
            users = {other for other, _l, _g in index.importers(f"{module_name(rel)}.{g}")
                     if scope_of(other) is Scope.MAIN and other != rel}
            return all(sources is not None and _called_only_under_fallback(sources.tree(other), g, sources.lines(other, (g,)))
                       for other in users)
        return bool(g)

    def where(site: tuple[str, int, bool | str]) -> str:
        rel, line, g = site
        if isinstance(g, str):
            return f"imported in {g}() at {rel}:{line}, which is called only under try/except"
        return f"imported under try/except at {rel}:{line}"

    out = []
    for f in findings:
        if f.severity is Severity.BLOCKER and f.code in KERNEL_CODES | {"DEP107"} and f.location.path \
                and f.location.path.endswith(".py"):
            sites = index.importers(module_name(f.location.path))
            if sites and all(guarded(s) for s in sites):
                f = _lower(f, where(sites[0]))
        elif f.code == E.CUDA_EXTENSION_BUILD.code and f.evidence.get("extension"):
            sites = index.importers(f.evidence["extension"])
            if sites and all(guarded(s) for s in sites):
                f = _lower(f, f"the extension is {where(sites[0])}")
        out.append(f)
    # CUDA sources whose Python wrappers (the .py modules beside them) are imported elsewhere only under a
    # fallback (s4's `try: from extensions.kernels.cauchy import ...` with a pure-PyTorch except branch)
    wrappers: dict[str, list[str]] = {}
    for rel in results:
        if rel.endswith(".py"):
            wrappers.setdefault(str(PurePosixPath(rel).parent), []).append(rel)
    for i, f in enumerate(out):
        if f.code == E.CUDA_SOURCES.code and f.severity is Severity.BLOCKER and f.location.path:
            d = str(PurePosixPath(f.location.path).parent)
            mods = [m for m in wrappers.get(d, []) if not m.endswith(("setup.py", "__init__.py"))]
            sites = [site for m in mods for site in index.importers(module_name(m))
                     if not site[0].startswith(d + "/")]
            if sites and all(guarded(site) for site in sites):
                out[i] = _lower(f, f"its Python wrappers are {where(sites[0])}")
    builds = [f for f in out if f.code == E.CUDA_EXTENSION_BUILD.code]
    if builds and all(f.fallback or f.evidence.get("fallback") for f in builds):
        out = [_lower(f, "every CUDA extension built from these sources has a fallback")
               if f.code == E.CUDA_SOURCES.code else f for f in out]
    return out


def _called_only_under_fallback(tree: ast.Module | None, name: str, lines: list[int] | None = None) -> bool:
    """Whether a file's ``tree`` uses ``name`` only in calls inside a ``try`` whose handler falls back (and at
    least once); a file that cannot be read or parsed (``None``), or passes the name on, counts as an unguarded
    use. With ``lines`` (those that hold the name), only the statements spanning one are entered."""
    if tree is None:
        return False
    calls = 0
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, safe = stack.pop()
        if lines is not None and isinstance(node, ast.stmt) and not spans_a_line(node, lines):
            continue
        if isinstance(node, ast.Try):
            falls_back = any(is_fallback_handler(h) for h in node.handlers)
            stack.extend((child, safe or falls_back) for child in node.body)
            stack.extend((child, safe) for h in node.handlers for child in h.body)
            stack.extend((child, safe) for child in (*node.orelse, *node.finalbody))
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Name) and func.id == name) or (isinstance(func, ast.Attribute) and func.attr == name):
                if not safe:
                    return False
                calls += 1
                stack.extend((child, safe) for child in (*node.args, *(k.value for k in node.keywords)))
                continue
        if isinstance(node, ast.Name) and node.id == name:
            return False  # passed on or stored: its calls cannot be followed
        stack.extend((child, safe) for child in ast.iter_child_nodes(node))
    return calls > 0


def drop_own_packages(findings: list[Finding], files: list[ProjectFile]) -> list[Finding]:
    """A project that *is* a CUDA package (mamba imports mamba_ssm) is judged by its kernels and
    extensions (EXT1xx), not by importing itself (DEP107)."""
    local: set[str] = set()
    for pf in files:
        if pf.python:
            parts = pf.relpath.split("/")
            if parts[0] == "src" and len(parts) > 1:
                parts = parts[1:]
            local.add(parts[0][:-3] if len(parts) == 1 and parts[0].endswith(".py") else parts[0])
    return [f for f in findings if not (f.code == "DEP107" and f.evidence.get("module") in local)]

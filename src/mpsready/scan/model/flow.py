"""Cross-file joins over the per-file summaries of :class:`~mpsready.scan.code.analyzer.CodeResult`.

- NumPy float64 through the project's own functions: a tensor made from the result of a function that
  returns a float64 array (``apply_coords`` does ``coords.astype(float)``), or from a parameter that some
  caller fills with a float64 array, and moved to a device before any cast, is DTY102 at the tensor.
  Functions are matched by their short name across the project (methods included): a name defined by
  several functions counts when any of them returns float64, which errs towards reporting.
- Pure-PyTorch reference paths beside CUDA kernels: a ``*_pytorch``/``*_naive``/... function that no
  main-scope code calls is EXT109, and the kernel findings of its package (or of a file whose fallback is
  keyed on the CPU, EXT108) name it as the path to wire in (remedy ``wire``).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, Mapping

from dataclasses import replace

from mpsready.findings import Basis, Finding, Location, Scope, Severity
from mpsready.scan.rules import dtypes as T
from mpsready.scan.rules import extensions as E
from mpsready.scan.scope import scope_of

_KERNELS = {"EXT101", "EXT102", "EXT103", "EXT104", "EXT105", "EXT106", "API120"}


def f64_findings(results: Mapping[str, Any]) -> list[Finding]:
    """DTY102 findings for float64 arrays that reach a device through a project function's return value or
    one of its parameters (see the module doc). ``results`` maps a relative path to (CodeResult, cells)."""
    returns: dict[str, str] = {}
    calls: dict[tuple[str, int], tuple[str, int]] = {}
    for rel, (res, _cells) in results.items():
        for name in res.f64_returns:
            returns.setdefault(name, rel)
        for call in res.f64_calls:
            calls.setdefault((call.callee, call.index), (rel, call.line))
    out = []
    for rel, (res, _cells) in sorted(results.items()):
        for sink in res.f64_sinks:
            callee = sink.callee
            if callee in returns:
                out.append(_dty102(rel, sink.line, sink.column, f"{sink.factory}() of {callee}() moves a float64 array to a device before "
                                   f"any cast ({callee} returns NumPy float64, {returns[callee]}): MPS refuses float64",
                                   {"via": "return", "function": callee, "defined_in": returns[callee]}))
        for ps in res.param_sinks:
            fn, idx = ps.function, ps.index
            hit = calls.get((fn, idx))
            if hit is not None:
                out.append(_dty102(rel, ps.line, ps.column, f"{ps.factory}() in {fn}() moves parameter {idx + 1} to a device before "
                                   f"any cast; {hit[0]}:{hit[1]} passes a NumPy float64 array: MPS refuses float64",
                                   {"via": "parameter", "function": fn, "caller": f"{hit[0]}:{hit[1]}"}))
    return out


def _dispatch_in_function(f: Finding, results: Mapping[str, Any], lines: list[int]) -> str | None:
    """``"file:line"`` of a CUDA dispatch inside the function that holds ``f``, or ``None``."""
    rel, at = f.location.path or "", f.location.line or 0
    spans = [s for s in results[rel][0].def_spans if s.first <= at <= s.last]
    if not spans:
        return None
    inner = min(spans, key=lambda s: s.last - s.first)
    first, last = inner.first, inner.last
    return next((f"{rel}:{n}" for n in lines if first <= n <= last), None)


def _dty102(rel: str, line: int, col: int, message: str, evidence: dict) -> Finding:
    return Finding(T.NUMPY_FLOAT64.code, T.NUMPY_FLOAT64.severity, message, Location(rel, line, col), Basis.PREDICTED,
                   T.NUMPY_FLOAT64.fix, T.NUMPY_FLOAT64.source, scope_of(rel), evidence)


def _package(rel: str) -> str:
    """The directory two levels above a file inside a package (``models/ops/functions/x.py`` -> ``models/ops``),
    the extent a pure path can stand in for (an extension's sources, setup.py and Python wrappers)."""
    parent = PurePosixPath(rel).parent
    return str(parent.parent if parent.name in ("functions", "modules", "ops", "kernels", "functional") else parent)


def _inside(path: str, pkg: str) -> bool:
    return pkg in (".", "") or path == pkg or path.startswith(pkg + "/")


def wire_pure_paths(findings: list[Finding], results: Mapping[str, Any]) -> list[Finding]:
    """EXT109 for unwired pure-PyTorch paths, and ``evidence["pure_path"]`` on the kernel findings they (or an
    EXT108 fallback keyed on the CPU, or a dispatch already keyed on CUDA) stand in for. Findings are returned in
    their order, EXT109 appended."""
    used: set[str] = set()
    for rel, (res, _cells) in results.items():
        if scope_of(rel) is Scope.MAIN:
            used.update(res.pure_refs)
    pure: list[tuple[str, str, int]] = []  # (package, "file:line", ...)
    extra: list[Finding] = []
    # a *_torch / *_naive helper stands in for nothing in a project without a CUDA kernel (hifi-gan's
    # spectral_de_normalize_torch): EXT109 only where a kernel finding exists
    kernels = any(f.code in _KERNELS and f.code != "API120" for f in findings)
    for rel, (res, _cells) in sorted(results.items()):
        if scope_of(rel) is not Scope.MAIN:
            continue
        for pure_def in res.pure_defs:
            name, line = pure_def.name, pure_def.line
            if name not in used and kernels:
                pure.append((_package(rel), f"{rel}:{line}", line))
                extra.append(Finding(E.PURE_PATH_UNWIRED.code, E.PURE_PATH_UNWIRED.severity,
                                     f"{name}() is a pure-PyTorch path that the main code never calls: wire it in for "
                                     "tensors that are not on CUDA", Location(rel, line), Basis.PREDICTED,
                                     E.PURE_PATH_UNWIRED.fix, E.PURE_PATH_UNWIRED.source, Scope.MAIN,
                                     {"function": name}))
    keyed = {f.location.path: f"{f.location.path}:{f.location.line}" for f in findings
             if f.code == E.FALLBACK_KEYED_ON_CPU.code and f.location.path is not None}  # a code finding: always a path
    dispatch: dict[str, list[int]] = {}
    for rel, (res, _cells) in sorted(results.items()):  # pure paths already keyed on CUDA (a migrated EXT108)
        if scope_of(rel) is Scope.MAIN and getattr(res, "device_dispatch", None):
            keyed.setdefault(rel, f"{rel}:{res.device_dispatch[0]}")
            dispatch[rel] = res.device_dispatch
    out = []
    for f in findings:
        if f.code in _KERNELS and f.severity is Severity.BLOCKER and f.location.path and not f.pure_path \
                and f.evidence.get("requires") != "cuda":  # an availability assertion (API120) has no kernel to stand in for
            path = keyed.get(f.location.path) or next((where for pkg, where, _l in pure if _inside(f.location.path, pkg)), None)
            if f.code == "API120" and f.location.path in dispatch and path == keyed.get(f.location.path):
                # `assert x.is_cuda` stands for one function: only a CUDA dispatch in that same function is its
                # pure path (svox2 dispatches in sample() but asserts CUDA in volume_render_fused())
                path = _dispatch_in_function(f, results, dispatch[f.location.path])
            if path is None and keyed and f.code == "EXT101":
                cu_dir = str(PurePosixPath(f.location.path).parent)
                path = next((w for p, w in keyed.items() if _inside(p, str(PurePosixPath(cu_dir).parent))
                             or _inside(cu_dir, str(PurePosixPath(p).parent))), None)
            if path is not None:
                f = replace(f, message=f"{f.message}; a pure-PyTorch path exists at {path}").with_evidence(
                    {k: v for k, v in f.evidence.items() if k != "no_alternative"}).with_state(pure_path=path)
        out.append(f)
    return out + extra

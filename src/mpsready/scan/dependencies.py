"""Judge declared dependencies against the knowledge base (DEP101, DEP102, DEP104, DEP105)."""

from __future__ import annotations

from packaging.markers import InvalidMarker, Marker

from mpsready.findings import Severity
from mpsready.scan import knowledge
from mpsready.scan.rules import deps as D
from mpsready.scan.sources.interface import Dependency, RawFinding

# The environment a Mac user installs into: Apple silicon, CPython 3.11 (PEP 508 marker variables).
MAC_MARKER_ENV = {
    "sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix", "platform_machine": "arm64",
    "implementation_name": "cpython", "platform_python_implementation": "CPython", "python_version": "3.11",
    "python_full_version": "3.11.9", "extra": "",
}
CONDA_CUDA_NAMES = {"cudatoolkit", "pytorch-cuda", "cudnn", "nccl", "magma-cuda"}
TORCH_FAMILY = {"torch", "torchvision", "torchaudio", "pytorch", "torchtext", "torchdata"}


def installs_on_mac(dep: Dependency) -> bool:
    """False when the dependency's marker excludes macOS arm64 (e.g. ``sys_platform == 'linux'``)."""
    if not dep.marker:
        return True
    try:
        return Marker(dep.marker).evaluate(MAC_MARKER_ENV)
    except (InvalidMarker, ValueError, KeyError):
        return True


def judge(dep: Dependency) -> RawFinding | None:
    """The finding for one dependency, or ``None`` when it is fine on a Mac (or not installed there)."""
    if not installs_on_mac(dep):
        return None
    name = knowledge.canonical_name(dep.name)
    where = f" ({dep.group})" if dep.group else ""
    opt = {"optional": True, "group": dep.group} if dep.optional else ({"group": dep.group} if dep.group else {})
    if name in TORCH_FAMILY and "+cu" in dep.specifier:
        return RawFinding(D.CUDA_LOCAL_VERSION, dep.path, dep.line,
                          f"{dep.name}{dep.specifier}{where} pins a CUDA build: no such wheel for macOS",
                          evidence={"package": name, "specifier": dep.specifier, **opt})
    entry = knowledge.lookup(name)
    if entry is None:
        if name.endswith("-gpu") or any(name.endswith(f"-{t}") or f"-{t}" in name for t in ("cu11", "cu12", "cu10", "cuda1")):
            return RawFinding(D.CUDA_LOCAL_VERSION, dep.path, dep.line,
                              f"{dep.name}{where}: a CUDA-specific build name; use the plain package on macOS",
                              severity=Severity.DEGRADES, evidence={"package": name, **opt})
        return None
    evidence = {"package": entry.name, "status": entry.status, **opt}
    if entry.alternative:
        evidence["alternative"] = entry.alternative
    elif entry.severity is Severity.BLOCKER:
        evidence["no_alternative"] = True
    fix = f"Use: {entry.alternative}." if entry.alternative else None
    status = entry.status_text
    if dep.ecosystem == "conda" and entry.name in CONDA_CUDA_NAMES:
        return RawFinding(D.CONDA_CUDA, dep.path, dep.line, f"conda package {dep.raw or dep.name}: no osx-arm64 build",
                          severity=entry.severity, fix=fix, evidence=evidence)
    rule = D.CUDA_FIRST_PACKAGE if entry.status == "cuda_first" else D.CUDA_ONLY_PACKAGE
    kind = "optional dependency" if dep.optional else "dependency"
    return RawFinding(rule, dep.path, dep.line, f"{kind} {dep.raw or dep.name}{where}: {entry.name} {status}",
                      severity=entry.severity, fix=fix, evidence={**evidence, "source": entry.source})

"""Judge declared dependencies against the knowledge base (DEP101, DEP102, DEP104, DEP105)."""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from mpsready.findings import Severity
from mpsready.scan import knowledge
from mpsready.scan.markers import MAC_MARKER_ENV, marker_on_mac  # noqa: F401 (MAC_MARKER_ENV re-exported)
from mpsready.scan.rules import deps as D
from mpsready.scan.sources.interface import Dependency, RawFinding

CONDA_CUDA_NAMES = {"cudatoolkit", "pytorch-cuda", "cudnn", "nccl", "magma-cuda"}
TORCH_FAMILY = {"torch", "torchvision", "torchaudio", "pytorch", "torchtext", "torchdata"}
# PyTorch releases that have the MPS backend (1.12 onwards), to test whether a pin allows any of them.
MPS_TORCH_RELEASES = ("1.12.0", "1.12.1", "1.13.0", "1.13.1", "2.0.0", "2.0.1", "2.1.0", "2.1.2", "2.2.0", "2.2.2",
                      "2.3.0", "2.3.1", "2.4.0", "2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.7.0", "2.7.1", "2.8.0",
                      "2.9.0", "2.9.1", "2.10.0", "2.11.0", "2.13.0", "2.14.1")
FIRST_MPS_TORCH = Version("1.12")


def excludes_mps_torch(dep: Dependency) -> bool:
    """True when a torch/pytorch pin admits no release with the MPS backend (``torch==1.8.1``,
    ``torch<1.12``, conda ``pytorch=1.7``). Local versions (+cu113) are ignored for this test."""
    spec = dep.specifier.strip()
    if not spec:
        return False
    if dep.ecosystem == "conda":  # conda match spec: =1.7 / ==1.7.1 / >=1.10,<1.11
        first = spec.lstrip("=<>!~ ").split(",")[0].split("*")[0].rstrip(".")
        try:
            return spec.startswith("=") and Version(first) < FIRST_MPS_TORCH
        except InvalidVersion:
            return False
    try:
        specs = SpecifierSet(",".join(s.split("+")[0] for s in spec.split(",")))
    except InvalidSpecifier:
        return False
    # a release newer than the list (torch==2.12.0) is still one with MPS: the bound test decides, not the list
    return not any(specs.contains(v, prereleases=True) for v in MPS_TORCH_RELEASES) \
        and not admits_at_least(spec, str(FIRST_MPS_TORCH))


def installs_on_mac(dep: Dependency) -> bool:
    """False when the dependency's marker excludes macOS arm64 (e.g. ``sys_platform == 'linux'``), or when
    its lock file's graph leaves it out there (``Dependency.left_out_on_mac``)."""
    return dep.left_out_on_mac is None and (not dep.marker or marker_on_mac(dep.marker))


def judge(dep: Dependency) -> list[RawFinding]:
    """The findings for one dependency (empty when it is fine on a Mac, or not installed there). A specifier
    packaging cannot turn into versions (a number past Python's int-to-str limit of 4,300 digits raises
    ``ValueError`` in ``packaging.version``) is judged as no specifier: the package is still judged by name."""
    try:
        return _judge(dep)
    except ValueError:
        import dataclasses

        return _judge(dataclasses.replace(dep, specifier=""))


def _judge(dep: Dependency) -> list[RawFinding]:
    if not installs_on_mac(dep):
        return []
    out: list[RawFinding] = []
    name = knowledge.canonical_name(dep.name)
    if name in ("torch", "pytorch") and excludes_mps_torch(dep):
        where = f" ({dep.group})" if dep.group else ""
        out.append(RawFinding(D.TORCH_BEFORE_MPS, dep.path, dep.line,
                              f"{dep.raw or dep.name}{where} allows only PyTorch releases before 1.12: no MPS backend",
                              evidence={"package": name, "specifier": dep.specifier}))
    finding = _judge_package(dep)
    return out + ([finding] if finding is not None else [])


def cuda_local_label(specifier: str) -> bool:
    """Whether a pin's local version label names a CUDA build: ``+cu118``, ``+pt20cu118`` (PEP 440 local
    versions; torch-scatter style labels put the CUDA tag after the PyTorch one)."""
    _, plus, label = specifier.partition("+")
    if not plus:
        return False
    low = label.lower()
    i = low.find("cu")
    while i >= 0:
        if i + 2 < len(low) and low[i + 2].isdigit():
            return True
        i = low.find("cu", i + 1)
    return False


def admits_at_least(spec: str, floor: str) -> bool:
    """Whether a PEP 440 specifier admits some release at or above ``floor`` (an empty one does). Exclusions
    (``!=``) never matter; an unparsable specifier is given the benefit of the doubt (its parse error is
    INP107 elsewhere)."""
    spec = spec.strip()
    if not spec:
        return True
    try:
        specs = SpecifierSet(",".join(s.split("+")[0] for s in spec.split(",")))
        low = Version(floor)
    except (InvalidSpecifier, InvalidVersion):
        return True
    for s in specs:
        op, raw = s.operator, s.version
        try:
            v = Version(raw.rstrip(".*").rstrip("."))
        except InvalidVersion:
            continue
        if op in ("==", "===") and not raw.endswith("*") and v < low:
            return False
        if op == "==" and raw.endswith("*") and Version(raw[:-2] + ".9999") < low:
            return False
        if op == "<" and v <= low or op == "<=" and v < low:
            return False
        if op == "~=" and Version(".".join(raw.split(".")[:-1]) + ".9999") < low:
            return False
    return True


def pin_admits_at_least(dep: Dependency, floor: str) -> bool:
    """:func:`admits_at_least` for a declared dependency of either ecosystem. A conda match spec is read as
    conda does: ``=2.3`` is any 2.3.x, ``==2.3.1`` that release, a build string after a space is ignored,
    and ranges (``>=2.1,<3``) are PEP 440 specifiers."""
    spec = dep.specifier.strip()
    if dep.ecosystem == "conda" and spec:
        spec = spec.split()[0]
        if spec.startswith("=") and not spec.startswith("=="):
            spec = "==" + spec[1:].rstrip(".*").rstrip(".") + ".*"
        elif spec[0].isdigit():
            spec = "==" + spec
    return admits_at_least(spec, floor)


def _judge_mps_since(dep: Dependency, entry, where: str, opt: dict) -> RawFinding | None:
    """DEP111 when the pin stays below the first release with Mac support; nothing when it reaches it."""
    if admits_at_least(dep.specifier, entry.mps_since):
        return None
    return RawFinding(D.PIN_BELOW_MAC_SUPPORT, dep.path, dep.line,
                      f"{dep.raw or dep.name}{where}: {entry.name} supports the Mac only from {entry.mps_since}; "
                      "this pin stays below it",
                      fix=f"Raise the pin to {entry.name}>={entry.mps_since}.",
                      evidence={"package": entry.name, "specifier": dep.specifier, "mps_since": entry.mps_since,
                                "raise_to": entry.mps_since, "source": entry.source, **opt})


# a Linux CUDA machine's marker environment: a marker true on the Mac and false here selects macOS itself
_LINUX_ENV = {**MAC_MARKER_ENV, "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"}


def mac_choice(dep: Dependency) -> bool:
    """Whether the dependency's marker selects macOS itself (``bitsandbytes<0.43; sys_platform == 'darwin'``): the
    project's own choice for the Mac, which it installs there knowingly; a blocker on it becomes ``degrades`` (issue
    32, round 11). A marker that does not parse is no such choice."""
    if not dep.marker or not marker_on_mac(dep.marker):
        return False
    from packaging.markers import InvalidMarker, Marker

    try:
        return not Marker(dep.marker).evaluate(_LINUX_ENV)
    except (InvalidMarker, ValueError, KeyError, TypeError):
        return False


def _judge_package(dep: Dependency) -> RawFinding | None:
    finding = _judge_package_plain(dep)
    if finding is None or (finding.severity or finding.rule.severity) is not Severity.BLOCKER or not mac_choice(dep):
        return finding
    import dataclasses

    return dataclasses.replace(finding, severity=Severity.DEGRADES,
                               message=f"{finding.message}; the project selects it for macOS itself ({dep.marker})",
                               evidence={**finding.evidence, "mac_choice": dep.marker})


def _judge_package_plain(dep: Dependency) -> RawFinding | None:
    name = knowledge.canonical_name(dep.name)
    where = f" ({dep.group})" if dep.group else ""
    opt = {"optional": True, "group": dep.group} if dep.optional else ({"group": dep.group} if dep.group else {})
    known = knowledge.lookup(name)
    # a CPU-build package (torch-scatter==2.1.0+pt113cu117) installs on a Mac, but not that CUDA build: the pin is the
    # limit (round 13), as for torch itself
    if cuda_local_label(dep.specifier) and (name in TORCH_FAMILY or known is None or known.status == "cpu_build"):
        return RawFinding(D.CUDA_LOCAL_VERSION, dep.path, dep.line,
                          f"{dep.name}{dep.specifier}{where} pins a CUDA build: no such wheel for macOS",
                          evidence={"package": name, "specifier": dep.specifier, **opt})
    entry = knowledge.lookup(name)
    if entry is not None and entry.status == "mps_since" and entry.mps_since:
        return _judge_mps_since(dep, entry, where, opt)
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
    # a package that installs on macOS (GPU features absent, or CPU kernels only) is DEP102: what its code uses decides
    rule = D.CUDA_FIRST_PACKAGE if entry.status in ("cuda_first", "cpu_build") else D.CUDA_ONLY_PACKAGE
    kind = "optional dependency" if dep.optional else "dependency"
    return RawFinding(rule, dep.path, dep.line, f"{kind} {dep.raw or dep.name}{where}: {entry.name} {status}",
                      severity=entry.severity, fix=fix, evidence={**evidence, "source": entry.source})

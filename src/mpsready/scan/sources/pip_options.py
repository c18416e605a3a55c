"""pip options that matter on a Mac: CUDA wheel indexes (DEP103)."""

from __future__ import annotations

from mpsready.scan.rules import deps as D
from mpsready.scan.sources.interface import RawFinding, SourceResult
from mpsready.findings import Severity

INDEX_OPTIONS = ("--index-url", "-i", "--extra-index-url", "-f", "--find-links")


def cuda_index_tag(url: str) -> str | None:
    """The CUDA tag of a wheel index URL (``cu121`` in .../whl/cu121), or ``None``."""
    for part in url.replace("+", "/").rstrip("/").split("/"):
        low = part.lower()
        if low.startswith("cu") and low[2:].isdigit():
            return low
        if low.startswith("cuda") and low[4:].replace(".", "").isdigit() and low[4:]:
            return low
    if "nvidia" in url.lower() and "pypi.nvidia.com" in url.lower():
        return "nvidia"
    return None


def check_index_option(result: SourceResult, path: str, line: int | None, opt: str, value: str) -> None:
    if opt not in INDEX_OPTIONS or not value:
        return
    tag = cuda_index_tag(value)
    if tag is None:
        return
    replaces = opt in ("--index-url", "-i")
    sev = Severity.BLOCKER if replaces else Severity.DEGRADES
    how = "replaces PyPI, so installs fail on macOS" if replaces else "adds CUDA builds; macOS falls back to PyPI wheels"
    result.findings.append(RawFinding(D.CUDA_WHEEL_INDEX, path, line, f"{opt} {value} ({tag}) {how}", severity=sev,
                                      evidence={"url": value, "cuda": tag}))

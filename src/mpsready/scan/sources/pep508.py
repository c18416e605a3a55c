"""PEP 508 requirement strings shared by every pip-flavoured source (packaging.requirements)."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlparse

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources.interface import Dependency, RawFinding, SourceResult


MAX_VERSION_DIGITS = 4000  # digits in one number of a version: Python's int() refuses past 4,300 by default


def _longest_digit_run(text: str) -> int:
    return max(map(len, re.findall(r"[0-9]+", text)), default=0) if len(text) > MAX_VERSION_DIGITS else 0


def short(text: str) -> str:
    """``repr`` of a requirement text, cut at 200 characters."""
    return repr(text if len(text) <= 200 else text[:197] + "...")


def add_requirement(result: SourceResult, text: str, path: str, line: int | None, *, optional: bool = False,
                    group: str | None = None) -> None:
    """Parse ``text`` as PEP 508 and append a :class:`Dependency`, or an INP107 finding when malformed."""
    text = text.strip()
    if not text:
        return
    try:
        req = Requirement(text)
    except (InvalidRequirement, ValueError) as exc:  # ValueError: urllib's "Invalid IPv6 URL" in `pkg @ https://[x`
        first = str(exc).splitlines()[0][:300]
        result.findings.append(RawFinding(I.MALFORMED_REQUIREMENT, path, line,
                                          f"malformed requirement {text!r}: {first}", evidence={"text": text}))
        return
    specifier = str(req.specifier)
    if _longest_digit_run(specifier) > MAX_VERSION_DIGITS:
        result.findings.append(RawFinding(I.MALFORMED_REQUIREMENT, path, line,
                                          f"malformed requirement {short(text)}: a version number of more than "
                                          f"{MAX_VERSION_DIGITS:,} digits (past Python's int-to-str limit); "
                                          "the version is not read", evidence={"text": text[:300]}))
        specifier = ""
    if req.url and not specifier:
        version = wheel_version(req.url)
        specifier = f"=={version}" if version else ""
    result.dependencies.append(Dependency(
        name=req.name, path=path, line=line, specifier=specifier, marker=str(req.marker) if req.marker else None,
        optional=optional, group=group, raw=text,
    ))


def wheel_version(url: str) -> str | None:
    """The version (local label included: ``2.0.1+cu118``) of a wheel URL's file name, or ``None`` when the URL
    does not name a wheel (``parse_wheel_filename``, PEP 427; ``%2B`` is the URL-encoded ``+``)."""
    try:
        name = unquote(urlparse(url).path).rsplit("/", 1)[-1]
    except ValueError:  # "Invalid IPv6 URL"
        return None
    if not name.endswith(".whl"):
        return None
    try:
        _dist, version, _build, _tags = parse_wheel_filename(name)
    except (InvalidWheelFilename, ValueError):
        return None
    return str(version)


def add_wheel_url(result: SourceResult, url: str, path: str, line: int | None) -> bool:
    """A bare wheel URL or file (``https://.../torchvision-0.16.0+cu122-cp310-...whl``) as a dependency pinned to
    the wheel's version; ``False`` when ``url`` does not name a wheel file."""
    try:
        name = unquote(urlparse(url).path).rsplit("/", 1)[-1]
    except ValueError:  # "Invalid IPv6 URL"
        return False
    if not name.endswith(".whl"):
        return False
    try:
        dist, version, _build, _tags = parse_wheel_filename(name)
    except (InvalidWheelFilename, ValueError):
        return False
    result.dependencies.append(Dependency(name=str(dist), path=path, line=line, specifier=f"=={version}", raw=url))
    return True

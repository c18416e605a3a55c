"""PEP 508 requirement strings shared by every pip-flavoured source (packaging.requirements)."""

from __future__ import annotations

from packaging.requirements import InvalidRequirement, Requirement

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources.interface import Dependency, RawFinding, SourceResult


def add_requirement(result: SourceResult, text: str, path: str, line: int | None, *, optional: bool = False,
                    group: str | None = None) -> None:
    """Parse ``text`` as PEP 508 and append a :class:`Dependency`, or an INP107 finding when malformed."""
    text = text.strip()
    if not text:
        return
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        first = str(exc).splitlines()[0]
        result.findings.append(RawFinding(I.MALFORMED_REQUIREMENT, path, line,
                                          f"malformed requirement {text!r}: {first}", evidence={"text": text}))
        return
    result.dependencies.append(Dependency(
        name=req.name, path=path, line=line, specifier=str(req.specifier), marker=str(req.marker) if req.marker else None,
        optional=optional, group=group, raw=text,
    ))

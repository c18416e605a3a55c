"""The baseline gate: fail only on findings that are new since a recorded baseline.

A CUDA project fails the scan until it is ported, so a gate it can adopt today must accept what is already
there and stop what is added. ``mpsready scan . --write-baseline mpsready-baseline.json`` records every current
finding by its fingerprint (:mod:`mpsready.scan.formats.fingerprint`: the rule, the file, the text of the line
and the message, never the line number, so a finding that only moves stays known);
``mpsready scan . --baseline mpsready-baseline.json`` then reports and gates on the findings whose fingerprint
the baseline does not hold. The static outlook is computed before and is never changed by a baseline: a
baseline narrows the gate, not the verdict.

Baseline document (JSON, schema ``mpsready.baseline`` version 1)::

    {"schema": {...}, "mpsready", "created", "root": the scanned path as given,
     "findings": [{"fingerprint", "code", "path", "line", "message"}]}

``path``, ``line`` and ``message`` are for a reader (and a merge conflict); only ``fingerprint`` matches.
A baseline is data, never code: it is read with ``json`` from a regular file of bounded size.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mpsready.errors import UsageError
from mpsready.schema import check_envelope, envelope

if TYPE_CHECKING:
    from mpsready.findings import Finding
    from mpsready.scan.engine import ScanResult

SCHEMA_NAME = "mpsready.baseline"
SCHEMA_VERSION = 1
MAX_BYTES = 64 * 1024 * 1024  # a baseline of a very large tree is a few MB; more is not one of ours


@dataclass
class BaselineMatch:
    """How one scan's findings stand against a baseline: ``known`` (held by the baseline, not gated),
    ``new`` (gated) and ``fixed`` (baseline entries no finding matched any more)."""

    path: str
    known: list[Finding] = field(default_factory=list)
    new: list[Finding] = field(default_factory=list)
    fixed: int = 0

    def to_dict(self) -> dict:
        return {"file": self.path, "known": len(self.known), "new": len(self.new), "fixed": self.fixed}

    def line(self) -> str:
        return (f"baseline {self.path}: {len(self.new)} new finding(s) gated, {len(self.known)} known finding(s) "
                f"not shown, {self.fixed} fixed since the baseline")


def entries(result: ScanResult) -> list[dict]:
    """The baseline entries of ``result``'s findings (the inline-suppressed ones are not findings)."""
    from mpsready.scan.formats.fingerprint import Placer

    placer = Placer(result.root)
    out = []
    for f in result.findings:
        repo_rel, _region, fp = placer.place(f)
        out.append({"fingerprint": fp, "code": f.code, "path": repo_rel, "line": f.location.line,
                    "message": f.message})
    return out


def document(results: list[ScanResult]) -> dict:
    """The baseline document of one or more scans (their findings together)."""
    rows = [row for r in results for row in entries(r)]
    return envelope(SCHEMA_NAME, SCHEMA_VERSION, root=[r.root for r in results] if len(results) > 1
                    else results[0].root, findings=rows)


def read(path: str) -> set[str]:
    """The fingerprints a baseline file holds. Raises :class:`~mpsready.errors.UsageError` (exit 2) when the
    file is missing, not a regular file, too large, not JSON or not a baseline document."""
    from mpsready.safeio import BadArtifact, read_bounded

    try:
        raw = read_bounded(path, MAX_BYTES)
    except BadArtifact as exc:
        raise UsageError(f"--baseline {path}: {'not a regular file' if 'not a regular' in str(exc) else exc}") from None
    except OSError as exc:
        raise UsageError(f"--baseline {path}: cannot open: {exc.strerror or exc}") from None
    try:
        doc = check_envelope(json.loads(raw.decode("utf-8")), SCHEMA_NAME, SCHEMA_VERSION)
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"--baseline {path}: not an mpsready baseline: {exc}") from None
    except RecursionError:  # json's decoder recurses once per nesting level (issue 34: exit 3, "a bug")
        raise UsageError(f"--baseline {path}: not an mpsready baseline: nested too deeply") from None
    rows = doc.get("findings")
    if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get("fingerprint"), str)
                                             for r in rows):
        raise UsageError(f"--baseline {path}: not an mpsready baseline: 'findings' must be a list of entries "
                         "with a 'fingerprint'")
    return {r["fingerprint"] for r in rows}


def apply(result: ScanResult, known_prints: set[str], path: str, used: set[str]) -> BaselineMatch:
    """Split ``result.findings`` into known and new (in place: ``result.findings`` keeps the new ones, so every
    format and the exit code see only them) and record the split on ``result.baseline``. ``used`` collects the
    fingerprints matched, so the caller can count the fixed ones over several scanned paths."""
    from mpsready.scan.formats.fingerprint import Placer

    placer = Placer(result.root)
    match = BaselineMatch(path)
    for f in result.findings:
        fp = placer.place(f)[2]
        if fp in known_prints:
            match.known.append(f)
            used.add(fp)
        else:
            match.new.append(f)
    result.findings = list(match.new)
    result.baseline = match
    return match


__all__ = ["BaselineMatch", "apply", "document", "entries", "read"]

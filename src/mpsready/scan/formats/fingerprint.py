"""Where a finding sits in the repository, and the fingerprint that finds it again after the code moves.

One place for both, shared by the SARIF log (``partialFingerprints["mpsready/v1"]``), the GitLab code-quality
report and the baseline gate (:mod:`mpsready.scan.baseline`), so a finding keeps one identity in all three.

The fingerprint hashes the rule, the repository-relative file, the text of the flagged line with its
whitespace collapsed (not its number, so an edit above does not make it new), the column and the message with
its digits masked (what tells two findings of one rule on one line apart), then appends ``:N`` counting exact
repeats in the order findings are given (most severe first, then by place: :func:`~mpsready.findings.sort_findings`).
"""

from __future__ import annotations

import hashlib
import re

from mpsready.findings import Finding
from mpsready.scan.formats.locate import Locator

_DIGITS = re.compile(r"\d+")  # over a finding's message text (never over source code)


class Placer:
    """Regions and fingerprints of one scan's findings. Fingerprints count repeats, so one ``Placer`` is
    used for one pass over the findings in order."""

    def __init__(self, root: str) -> None:
        self.loc = Locator(root)
        self.seen: dict[str, int] = {}

    def physical(self, f: Finding) -> tuple[dict, str]:
        """(``{"region": {...}}`` with 1-based ``startLine``, ``startColumn`` in code points and, when the
        syntax tree gave them, ``endLine``/``endColumn``; the repository-relative path). A finding on a
        directory or a file-level finding points at line 1 of a real file (:meth:`Locator.file_for`)."""
        loc = f.location
        rel = self.loc.file_for(loc.path if loc.path not in (None, "") else ".")
        pointed = rel is not None and rel == loc.path  # the finding's own file, so its line and columns hold
        rel_path = rel if rel is not None else (loc.path or ".")
        repo_rel = self.loc.repo_path(rel_path)
        region: dict = {"startLine": loc.line if pointed and loc.line else 1}
        if pointed and loc.line and loc.column:
            python = rel_path.endswith(".py")
            col = self.loc.code_point_column(rel_path, loc.line, loc.column) if python else loc.column
            region["startColumn"] = col
            if loc.end_line and loc.end_column and loc.end_line >= loc.line:
                end = (self.loc.code_point_column(rel_path, loc.end_line, loc.end_column) if python
                       else loc.end_column)
                if loc.end_line > loc.line or end > col:
                    region["endLine"], region["endColumn"] = loc.end_line, end
        return {"region": region}, repo_rel

    def fingerprint(self, f: Finding, repo_rel: str, region: dict) -> str:
        """``<32 hex digits>:<N>``: see the module docstring."""
        line_text = b""
        if f.location.path and f.location.line:
            line_text = self.loc.line_bytes(f.location.path, f.location.line) or b""
        parts = [f.code, repo_rel, " ".join(line_text.decode("utf-8", errors="replace").split()),
                 str(region.get("startColumn", "")), _DIGITS.sub("0", f.message)]
        digest = hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]
        n = self.seen.get(digest, 0) + 1
        self.seen[digest] = n
        return f"{digest}:{n}"

    def place(self, f: Finding) -> tuple[str, dict, str]:
        """(repository-relative path, region, fingerprint) of the next finding in order."""
        physical, repo_rel = self.physical(f)
        return repo_rel, physical["region"], self.fingerprint(f, repo_rel, physical["region"])


def fingerprints(root: str, findings: list[Finding]) -> list[str]:
    """The fingerprint of each of ``findings`` (in the order given), as the SARIF log writes them."""
    placer = Placer(root)
    return [placer.place(f)[2] for f in findings]


__all__ = ["Placer", "fingerprints"]

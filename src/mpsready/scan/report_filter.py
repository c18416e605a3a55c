"""What the scan reports and gates on, out of what it read (issue 34 item 5): the command line's select and
ignore (the user's, applied before the outlook), and the report filters applied after it: per-file-ignores,
ignore-scopes and the project's own select / ignore / exclude, which narrow the report, never the outlook nor
(the project's own) the gate on it."""

from __future__ import annotations

import fnmatch

from mpsready import rules as registry
from mpsready.findings import Finding
from mpsready.scan.config import ScanConfig


def select_codes(findings: list[Finding], config: ScanConfig) -> list[Finding]:
    codes = sorted({f.code for f in findings})
    keep = set(registry.select(codes, list(config.select))) if config.select else set(codes)
    keep -= set(registry.select(codes, list(config.ignore)))
    return [f for f in findings if f.code in keep]


def report_filter(findings: list[Finding], config: ScanConfig) -> list[Finding]:
    """``findings`` less those in an ``ignore-scopes`` scope or matched by a ``per-file-ignores`` glob (fnmatch
    on the project-relative path, as ``exclude``) and code or prefix, and less those the project's own
    ``select`` / ``ignore`` / ``exclude`` leave out (report-only: :class:`ScanConfig` ``report_*``)."""
    if not (config.per_file_ignores or config.ignore_scopes or config.report_select or config.report_ignore
            or config.report_exclude):
        return findings
    scopes = set(config.ignore_scopes)
    kept = {f.code for f in select_codes(findings, config.replace(select=config.report_select,
                                                              ignore=config.report_ignore))}
    out = []
    for f in findings:
        if f.scope.value in scopes or f.code not in kept:
            continue
        path = f.location.path or ""
        if config.report_exclude and _excluded_path(path, config.report_exclude):
            continue
        if any(fnmatch.fnmatch(path, glob) and registry.select([f.code], list(codes))
               for glob, codes in config.per_file_ignores):
            continue
        out.append(f)
    return out


def hidden_gate(findings: list[Finding], shown: list[Finding], config: ScanConfig) -> int:
    """How many main-path findings at or above ``config.fail_on`` only the project's own select / ignore /
    exclude (``report_*``) or per-file-ignores (read from the project only) took out of the report: the project
    narrows its report, never the gate on the outlook it reads (``per-file-ignores = {"*" = ["API"]}`` exited 0
    on a CUDA project). ``ignore-scopes`` may come from the command line and keeps narrowing the gate."""
    from mpsready.scan.model.remedy import limits

    if not (config.report_select or config.report_ignore or config.report_exclude or config.per_file_ignores):
        return 0
    plain = config.replace(report_select=(), report_ignore=(), report_exclude=(), per_file_ignores=())
    kept = {id(f) for f in shown}
    return sum(1 for f in report_filter(findings, plain) if id(f) not in kept
               and f.severity.rank >= config.fail_on.rank and limits(f))


def _excluded_path(path: str, patterns: tuple[str, ...]) -> bool:
    """Whether ``path`` or a folder above it matches one of ``patterns`` as the walk matches ``exclude``."""
    parts = path.split("/")
    for i in range(1, len(parts) + 1):
        rel = "/".join(parts[:i])
        if any(fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(rel + "/", pat) for pat in patterns):
            return True
    return False

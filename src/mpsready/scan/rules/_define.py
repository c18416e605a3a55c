"""A small helper so each rule module reads as a table of documented rules."""

from __future__ import annotations

from mpsready.findings import Severity
from mpsready.rules import Rule, register


def rule(code: str, name: str, severity: str, summary: str, why: str, example: str, fix: str, source: str) -> Rule:
    """Register and return a :class:`~mpsready.rules.Rule`; raises ``ValueError`` on a duplicate code."""
    return register(Rule(code, name, Severity(severity), summary, why, example, fix, source))

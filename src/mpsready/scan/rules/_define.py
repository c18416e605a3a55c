"""A small helper so each rule module reads as a table of documented rules."""

from __future__ import annotations

from typing import Callable, Union

from mpsready.findings import Severity
from mpsready.rules import Rule, register

# Words a rule needs in a Python source to be able to fire at all (see mpsready.scan.code.triggers):
# a tuple, or a function returning one when the words come from a data file. Code rules only.
Triggers = Union[tuple[str, ...], Callable[[], tuple[str, ...]]]
TRIGGERS: dict[str, Triggers] = {}


def rule(code: str, name: str, severity: str, summary: str, why: str, example: str, fix: str, source: str,
         *, triggers: Triggers | None = None) -> Rule:
    """Register and return a :class:`~mpsready.rules.Rule`; raises ``ValueError`` on a duplicate code.

    Whether `mpsready migrate` fixes the rule is registered by the migrate stage (:func:`~mpsready.rules.register_autofix`).
    ``triggers`` (code rules only): identifiers or words of which a Python source must contain at least one
    (as a whole word) for the analyser to be able to report this rule there.
    """
    registered = register(Rule(code, name, Severity(severity), summary, why, example, fix, source))
    if triggers is not None:
        TRIGGERS[code] = triggers
    return registered

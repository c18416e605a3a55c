"""Adapter for ``pytest --mps-emulate --mps-json FILE`` (schema ``mpsready.pytest`` v1): the project's own test
suite on the emulated Mac.

Every test ran here on the emulated MPS device (:mod:`mpsready.pytest_plugin`); its Mac verdict is **predicted**
(basis ``emulated``), nothing ran on a Mac. Checklist item 4 (the step on MPS) reads it: a predicted Mac failure
in any test fails the item (predicted); a suite whose tests reached MPS with none predicted to fail lets it read
"not checked (predicted to pass)", never "passed". A test that failed here on its own exception (verdict
``inconclusive``) says nothing about the Mac. A test module that failed to collect (``collection_errors``) never
ran: item 4 says "not run: collection error" for it and cannot pass on that suite.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from mpsready.report.evidence._util import EvidenceError, as_int, load_json
from mpsready.report.evidence.run import RunFailure, _where


@dataclass(frozen=True)
class TestFailure:
    """One test's predicted Mac failure: ``nodeid`` and the failure (op, dtype, the project's line)."""

    __test__ = False

    nodeid: str
    failure: RunFailure

    def line(self) -> str:
        """``emulated Mac tests: tests/test_x.py::test_y: aten::ones (float64) at tests/test_x.py:9: TypeError ...``."""
        return "emulated Mac tests: " + self.nodeid + ": " + self.failure.line().removeprefix("emulated Mac run: ")


@dataclass
class TestsEvidence:
    __test__ = False

    source: str | None
    torch_target: str | None
    macos_target: str | None
    fallback_enabled: bool | None
    counts: dict[str, int]  # verdict -> tests (watch.VERDICTS), and "tests"
    test_failures: list[TestFailure]
    fallback_ops: dict[str, int]  # op -> tests
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    collection_errors: list[tuple[str, str]] = field(default_factory=list)  # (module, message): never ran

    def collection_lines(self) -> list[str]:
        """``emulated Mac tests: tests/test_ext.py not run: collection error: ImportError: ...``, one per module."""
        return [f"emulated Mac tests: {m} not run: collection error: {msg[:200]}" for m, msg in self.collection_errors]

    @property
    def causes(self) -> list[tuple[RunFailure, int]]:
        """One row per cause (kind, op, dtype): its first failure (with the project's line) and how many tests
        hit it; most tests first, then in the suite's order."""
        rows: dict[tuple, list] = {}
        for tf in self.test_failures:
            key = (tf.failure.kind, tf.failure.op, tf.failure.dtype)
            row = rows.setdefault(key, [tf.failure, set()])
            row[1].add(tf.nodeid)
        ordered = sorted(enumerate(rows.values()), key=lambda iv: (-len(iv[1][1]), iv[0]))
        return [(first, len(ids)) for _i, (first, ids) in ordered]

    @property
    def failures(self) -> list[RunFailure]:
        """The first failure of each cause (:attr:`causes`), for the checklist's ways around."""
        return [first for first, _n in self.causes]

    def count(self, verdict: str) -> int:
        return self.counts.get(verdict, 0)


def from_doc(doc: dict[str, Any], source: str | None = None) -> TestsEvidence:
    from mpsready.pytest_plugin.document import load_document

    try:
        load_document(doc)
    except ValueError as exc:
        raise EvidenceError(f"{source or 'pytest output'}: {exc}") from None
    tgt = doc.get("target") or {}
    failures = []
    for t in doc["tests"]:
        if not isinstance(t, dict):
            continue
        for f in t.get("failures") or []:
            if isinstance(f, dict) and f.get("mac", True):
                failures.append(TestFailure(str(t.get("nodeid")), RunFailure(
                    kind=str(f.get("kind") or "error"), op=f.get("op"), dtype=f.get("dtype"),
                    message=str(f.get("message") or ""), where=_where(f.get("location")), fixed_in=f.get("fixed_in"))))
    summary = doc.get("summary") or {}
    counts = {k: as_int(v) or 0 for k, v in summary.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    fb = summary["fallback_ops"] if isinstance(summary.get("fallback_ops"), dict) else {}
    errors = [(str(e.get("module") or "?"), str(e.get("message") or "")) for e in doc.get("collection_errors") or []
              if isinstance(e, dict)]
    return TestsEvidence(source=source, torch_target=tgt.get("torch"), macos_target=tgt.get("macos"),
                         fallback_enabled=tgt.get("fallback"), counts=counts, test_failures=failures,
                         fallback_ops={str(k): as_int(v) or 0 for k, v in fb.items()}, raw=doc,
                         collection_errors=errors)


def load(path: str | os.PathLike[str]) -> TestsEvidence:
    from mpsready.pytest_plugin.document import SCHEMA

    return from_doc(load_json(path, SCHEMA), source=str(path))

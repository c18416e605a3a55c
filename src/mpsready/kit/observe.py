"""pytest plugin of the kit: observes the project's tests on the real device (``-p mpsready.kit.observe
--kit-observe FILE``). It never emulates anything and changes no outcome: for each test it keeps the outcome,
the duration, and for a failure the exception type and the first line of its message (never a traceback's
locals), classified with PyTorch's MPS texts (:func:`mpsready.record.mps.classify_error`: an operator without
an MPS kernel, the float64 refusal); and the operators that PyTorch's CPU-fallback warning named
(:func:`mpsready.record.mps.parse_fallback_warning`), with the first test that saw each. Each test also keeps its
mpsready markers (``mps_mac``/``mps_not_mac``, an alias counted as its new name) in the file; ``report`` does
not read them yet. The markers are declared here too: the kit
runs mpsready from ``PYTHONPATH``, where the installed plugin's entry point is absent, and a suite using them under
``--strict-markers`` would otherwise not collect on the Mac.

Writes ``FILE`` (schema ``mpsready.kit.tests`` v1, basis ``observed``) at the end of the session.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from mpsready.pytest_plugin import marker_names, register_markers
from mpsready.record.mps import classify_error, parse_fallback_warning
from mpsready.schema import envelope

SCHEMA = "mpsready.kit.tests"
MESSAGE_CHARS = 300


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("mpsready-kit").addoption(
        "--kit-observe", dest="kit_observe", default=None, metavar="FILE",
        help="write each test's observed outcome on this machine's device (mpsready kit; observes only)")


def pytest_configure(config: pytest.Config) -> None:
    register_markers(config)
    path = config.getoption("kit_observe", None)
    if path:
        config.pluginmanager.register(Observer(os.path.abspath(path)), "mpsready-kit-observer")


def _crash(report: pytest.TestReport) -> tuple[str | None, str | None]:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) or (str(report.longrepr) if report.longrepr else None)
    if not text:
        return None, None
    first = text.strip().splitlines()[0] if text.strip() else ""
    kind, _, msg = first.partition(": ")
    if not msg or " " in kind:
        return None, first[:MESSAGE_CHARS]
    return kind, msg[:MESSAGE_CHARS]


class Observer:
    def __init__(self, path: str) -> None:
        self.path = path
        self.tests: dict[str, dict[str, Any]] = {}
        self.fallbacks: dict[str, str] = {}  # op -> first test that warned
        self.markers: dict[str, list[str]] = {}  # nodeid -> mpsready markers

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        names = marker_names(item)
        if names:
            self.markers[item.nodeid] = names

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = self.tests.setdefault(report.nodeid, {"nodeid": report.nodeid, "outcome": "passed", "seconds": 0.0,
                                                      "markers": self.markers.get(report.nodeid, [])})
        entry["seconds"] = round(entry["seconds"] + float(report.duration or 0.0), 4)
        if report.skipped and report.when in ("setup", "call"):
            entry["outcome"] = "skipped"
        elif report.failed:
            entry["outcome"] = "failed" if report.when == "call" else "error"
            exc, msg = _crash(report)
            kind, op = classify_error(msg)
            entry.update(stage=report.when, exception=exc, message=msg, mps_kind=kind, op=op)

    def pytest_warning_recorded(self, warning_message: Any, when: str, nodeid: str, location: Any) -> None:
        op = parse_fallback_warning(str(getattr(warning_message, "message", "")))
        if op and op not in self.fallbacks:
            self.fallbacks[op] = nodeid or when

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        tests = sorted(self.tests.values(), key=lambda t: t["nodeid"])
        counts: dict[str, int] = {}
        for t in tests:
            counts[t["outcome"]] = counts.get(t["outcome"], 0) + 1
        doc = envelope(SCHEMA, 1, basis="observed", exit_status=int(exitstatus), counts=counts, tests=tests,
                       fallbacks=[{"op": op, "first_test": t} for op, t in sorted(self.fallbacks.items())])
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        with open(self.path, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2)

"""``pytest --mps-emulate -n N``: the plugin in pytest-xdist's controller, which runs no test itself.

Each xdist worker is a pytest process of its own: it installs its own emulated Mac before its conftests load
(:class:`~mpsready.pytest_plugin.MacSession` with ``worker=True``), judges the tests it is given, marks the reports
of predicted Mac failures (``mpsready_mac``, plain data, so it travels with the report) and, when its session
ends, hands its per-test entries to the controller in pytest-xdist's ``workeroutput`` (``xdist/remote.py`` sends
it with the ``workerfinished`` event; pytest-xdist 3.x). The controller (:class:`ControllerSession`) merges them
in collection order into the one ``mpsready.pytest`` document, applies the gate and prints the summary, exactly
as a single-process session does.

A worker that ends before it hands its entries over (a crash, ``os._exit`` in a test, a Mac abort) leaves tests
the controller saw reported but that no worker judged: each gets the verdict ``inconclusive`` with
``worker_lost`` set, and the gate fails, naming the worker and its error (nothing it ran can be vouched for).
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from mpsready.pytest_plugin.outcome import WORKER_KEY, collection_message, mac_teststatus, outcome_of
from mpsready.pytest_plugin.render import write_summary


class ControllerSession:
    """The plugin in the xdist controller: collection errors, the workers' entries, the document and the gate."""

    def __init__(self, config: pytest.Config, torch_v: str, macos: str):
        self.config = config
        self.torch_requested = torch_v
        self.macos = macos
        self.root = str(config.rootpath) if getattr(config, "rootpath", None) else os.getcwd()
        self.collection_errors: list[dict[str, Any]] = []
        self.order: list[str] = []
        self.entries: dict[str, dict[str, Any]] = {}
        self.target: dict[str, Any] | None = None
        self.lost: list[str] = []  # "gw0: <error>" per worker that ended without handing its entries over
        self.reports: dict[str, list] = {}
        self.doc: dict[str, Any] | None = None

    def _options(self):
        opt = self.config.option
        return opt if getattr(opt, "mps_json", None) or getattr(opt, "mps_fail_on", None) \
            else self.config.known_args_namespace

    def start_document(self) -> None:
        """With ``--mps-json``: a document with a failed gate written at once, replaced when the session ends (a
        controller that dies leaves a failed gate, never a stale pass)."""
        if self._options().mps_json:
            self._write(finished=False)

    # ------------------------------------------------------------------ hooks
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # xdist forwards a worker's failed collection once, whichever worker saw it first (dsession.py)
        if report.failed:
            module = report.nodeid or str(report.fspath)
            if all(e["module"] != module for e in self.collection_errors):
                self.collection_errors.append({"module": module,
                                               "message": collection_message(report.longreprtext)})

    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        if not self.order:
            self.order = list(ids)

    def pytest_testnodedown(self, node, error) -> None:
        payload = (getattr(node, "workeroutput", None) or {}).get(WORKER_KEY)
        name = getattr(getattr(node, "gateway", None), "id", None) or "worker"
        if payload is None:
            self.lost.append(f"{name}: {error or 'ended before its session finished'}")
            return
        part = json.loads(payload)
        self.target = self.target or part["target"]
        for entry in part["tests"]:
            self.entries[entry["nodeid"]] = entry

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reports.setdefault(report.nodeid, []).append(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report, config):
        return mac_teststatus(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus) -> None:
        self.doc = self._write(finished=True)
        if self.doc["gate"]["failed"] and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        write_summary(self.doc, terminalreporter, config)

    # ------------------------------------------------------------------ the document
    def _tests(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The merged per-test entries in collection order, and the node ids no worker judged."""
        tests = dict(self.entries)
        unjudged = []
        for nodeid, reports in self.reports.items():
            if nodeid not in tests:
                unjudged.append(nodeid)
                tests[nodeid] = {"nodeid": nodeid, "markers": [], "outcome": outcome_of(reports),
                                 "mac": "inconclusive", "failed_by_mac": False, "failures": [], "fallbacks": [],
                                 "wrong_results": [], "expected_failures": [], "mps_used": False,
                                 "ops_judged": 0, "seconds": 0.0, "worker_lost": True}
        rank = {nodeid: i for i, nodeid in enumerate(self.order)}
        ordered = sorted(tests.values(), key=lambda t: (rank.get(t["nodeid"], len(rank)), t["nodeid"]))
        return ordered, unjudged

    def _target(self) -> dict[str, Any]:
        if self.target is not None:
            return self.target
        # no worker handed anything over: the target as asked for, its table release unknown
        return {"torch": self.torch_requested, "torch_requested": self.torch_requested, "macos": self.macos,
                "fallback": os.environ.get("PYTORCH_ENABLE_MPS_FALLBACK") == "1", "mps_available": None}

    def _write(self, *, finished: bool) -> dict[str, Any]:
        from mpsready.output import write_text
        from mpsready.pytest_plugin.document import build_document

        opt = self._options()
        tests, unjudged = self._tests()
        doc = build_document(self._target(), tests, opt.mps_fail_on, list(self.config.invocation_params.args),
                             self.root, collection_errors=self.collection_errors,
                             allow_empty=bool(getattr(opt, "mps_allow_empty", False)))
        doc["session_finished"] = finished
        doc["workers"] = {"lost": list(self.lost), "tests_not_judged": len(unjudged)}
        why = []
        if not finished:
            why.append("the session has not finished (a document left like this: the process died)")
        if self.lost or unjudged:
            why.append(f"{len(unjudged)} test(s) not judged: pytest-xdist worker(s) ended before handing over "
                       f"their verdicts ({'; '.join(self.lost) or 'no worker output'})")
        if why:
            doc["gate"] = dict(doc["gate"], failed=True,
                               reason="; ".join(filter(None, [doc["gate"].get("reason"), *why])))
        if opt.mps_json:
            write_text(opt.mps_json, json.dumps(doc, indent=1, default=str))
        return doc

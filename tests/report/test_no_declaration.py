"""Checklist item 1 for a project that declares no dependencies (scan DEP110): not checked, never clean."""

from __future__ import annotations

import json
from pathlib import Path

from mpsready.report.build import build_report
from mpsready.report.checklist import Status
from mpsready.report.evidence import Evidence
from mpsready.report.evidence import scan
from mpsready.scan import scan_path
from mpsready.scan.formats.json import JsonFormat

FIXTURE = Path(__file__).parents[1] / "scan" / "fixtures" / "no_declaration"


def _item1(doc):
    rep = build_report(Evidence(scan=scan.from_doc(doc)))
    return next(it for it in rep.checklist if it.number == 1)


def test_item1_says_the_project_declares_no_dependencies():
    doc = json.loads(JsonFormat().render(scan_path(FIXTURE)))  # the real scan output, through the adapter
    item = _item1(doc)
    assert (item.status, item.basis, item.prediction) == (Status.NOT_CHECKED, None, None)
    assert f"{item.label}: {item.summary}" == "not checked: the project declares no dependencies"
    assert [e.code for e in item.evidence] == ["DEP110"]
    assert item.next_step == "declare the dependencies (requirements.txt or pyproject.toml), then scan again"


def test_item1_without_dep110_still_predicts_a_pass():
    item = _item1({"schema": {"name": "mpsready.scan", "version": 1}, "findings": [], "outlook": "runs_on_mac"})
    assert f"{item.label}: {item.summary}" == ("not checked (predicted to pass): the scan names no dependency that "
                                               "cannot install on macOS; not yet installed on a Mac")

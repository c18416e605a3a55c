"""report.json validates against the shipped JSON Schema (src/mpsready/report/schema/report-v1.schema.json),
which also encodes the rule that a passed item (other than the static review, item 2) is observed."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from mpsready.report.build import build_report
from mpsready.report.evidence import Evidence
from mpsready.report.formats import json as json_fmt
from tests.report import test_verdict as tv
from tests.report.test_html_browser import demo_like_report

SCHEMA = json.loads((Path(__file__).parents[2] / "src/mpsready/report/schema/report-v1.schema.json").read_text())


@pytest.mark.parametrize("make", ["empty", "clean", "clean_mps", "demo_like"])
def test_report_json_is_valid(tmp_path, make):
    report = {"empty": lambda: build_report(Evidence()),
              "clean": lambda: build_report(tv.clean_evidence(tmp_path)),
              "clean_mps": lambda: build_report(tv.clean_evidence(tmp_path, mps=True)),
              "demo_like": lambda: demo_like_report(tmp_path)}[make]()
    jsonschema.validate(json.loads(json_fmt.render(report)), SCHEMA)


def test_schema_rejects_an_unobserved_pass(tmp_path):
    doc = json.loads(json_fmt.render(build_report(tv.clean_evidence(tmp_path))))
    doc["checklist"][3].update(status="passed", basis="predicted", label="passed")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, SCHEMA)

"""benchmarks/scan_census.py (issue 32, round 9): the class of each verdict that differs from its label, and the count by
(label, verdict, deciding key). Tiny fixtures written for these tests; two go through a real scan's JSON document."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from mpsready.scan import scan_path
from mpsready.scan.formats.json import to_document

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("scan_census", ROOT / "benchmarks" / "scan_census.py")
assert _spec is not None and _spec.loader is not None
census = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(census)


def _doc(project: Path) -> dict:
    return json.loads(json.dumps(to_document(scan_path(project))))


def test_a_too_pessimistic_verdict_names_its_limits_with_line_and_chain(write_project):
    proj = write_project({"train.py": "import torch\nfrom net import build\n\nmodel = build()\n",
                          "net.py": "import torch\n\n\ndef build():\n    return torch.nn.Linear(2, 2).cuda()\n",
                          "requirements.txt": "torch\n"})
    doc = _doc(proj)
    assert doc["outlook"]["verdict"] == "mac_for_dev"
    d = census.decision(doc, "runs_on_mac")
    assert d == {"label": "runs_on_mac", "verdict": "mac_for_dev", "decided_by": doc["outlook"]["decided_by"],
                 "direction": "too_pessimistic", "key": "API101",
                 "details": ["API101 net.py:5 [edit] (train.py:2 -> net.py)"], "total": 1}
    assert census.decision(doc, "mac_for_dev") is None  # agreement: no class


def test_a_too_optimistic_verdict_names_the_credit_that_lifted_it(write_project):
    # the only CUDA call is in a tutorial: the scan says runs_on_mac; a label that counts the tutorial disagrees
    proj = write_project({"train.py": "import torch\n\nx = torch.zeros(2)\n",
                          "examples/demo.py": "import torch\n\nx = torch.zeros(2).cuda()\n",
                          "requirements.txt": "torch\n"})
    doc = _doc(proj)
    assert doc["outlook"]["verdict"] == "runs_on_mac"
    d = census.decision(doc, "mac_for_dev")
    assert (d["direction"], d["key"], d["details"], d["total"]) == (
        "too_optimistic", "scope:examples", ["API101 examples/demo.py:3 [scope:examples]"], 1)


def _finding(code, path, line, severity="blocker", scope="main", **evidence):
    f = {"code": code, "severity": severity, "scope": scope, "location": {"path": path, "line": line}}
    if evidence:
        f["evidence"] = evidence
    return f


def _outlook(verdict, limiting=(), decided_by="d"):
    return {"verdict": verdict, "decided_by": decided_by, "limiting_total": len(limiting),
            "limiting": [{"code": f["code"], "path": f["location"]["path"], "line": f["location"]["line"]}
                         for f in limiting]}


def test_credits_each_kind():
    found = [
        _finding("API101", "a.py", 1, reach="off_main_path", other_entries="reached only from b.py"),
        _finding("API104", "c.py", 2, severity="info", secondary_cpu="a secondary selection"),
        _finding("API102", "d.py", 3, severity="info", mac_never={"test": "x"}),
        _finding("DEP107", "requirements/extra.txt", 4, optional="a feature's requirement file"),
        _finding("API104", "e.py", 5, severity="degrades", remedy={"kind": "flag", "flag": "--device mps"}),
        _finding("API102", "f.py", 6, severity="info", guarded=True),  # info by its own rule: no credit
        _finding("INP105", "g.py", 7),  # unread: never a credit
    ]
    doc = {"outlook": _outlook("runs_on_mac"), "findings": found}
    d = census.decision(doc, "mac_for_dev")
    assert d["key"] == "flag+mac_never+optional+other_entries+secondary_cpu"
    assert d["details"] == ["API101 a.py:1 [other_entries]", "API104 c.py:2 [secondary_cpu]", "API102 d.py:3 [mac_never]",
                            "DEP107 requirements/extra.txt:4 [optional]", "API104 e.py:5 [flag]"]
    assert d["total"] == 5


def test_a_mac_for_dev_verdict_above_stay_on_cuda_is_lifted_by_its_swaps():
    swap = _finding("DEP107", "requirements.txt", 3, remedy={"kind": "swap", "what": "leave it out on the Mac"})
    doc = {"outlook": _outlook("mac_for_dev", [swap]), "findings": [swap]}
    d = census.decision(doc, "stay_on_cuda")
    assert (d["key"], d["details"]) == ("swap", ["DEP107 requirements.txt:3 [swap]"])
    # the same swap does not lift a runs_on_mac verdict (it would have limited it); nothing else found
    doc = {"outlook": _outlook("runs_on_mac"), "findings": [swap]}
    assert census.decision(doc, "mac_for_dev")["key"] == "nothing found"


def test_a_lift_above_stay_on_cuda_counts_only_what_would_have_held_it():
    # a test file's CUDA call is no reason for stay_on_cuda; a kernel in the tests is
    found = [_finding("API101", "tests/t.py", 1, scope="tests"), _finding("EXT101", "tests/k.cu", 2, scope="tests")]
    d = census.decision({"outlook": _outlook("mac_for_dev"), "findings": found}, "stay_on_cuda")
    assert (d["key"], d["details"]) == ("scope:tests", ["EXT101 tests/k.cu:2 [scope:tests]"])


def test_by_code_counts_a_repository_once_per_code_of_its_key():
    a = {"label": "runs_on_mac", "verdict": "mac_for_dev", "key": "API101+DEP107"}
    b = {"label": "runs_on_mac", "verdict": "mac_for_dev", "key": "DEP107"}
    assert census.by_code([a, b]) == [("runs_on_mac", "mac_for_dev", "DEP107", 2),
                                      ("runs_on_mac", "mac_for_dev", "API101", 1)]


def test_the_census_counts_by_label_verdict_and_key():
    a = {"label": "runs_on_mac", "verdict": "mac_for_dev", "key": "API101"}
    b = {"label": "mac_for_dev", "verdict": "stay_on_cuda", "key": "EXT101"}
    table = census.census([a, b, a])
    assert table == [("runs_on_mac", "mac_for_dev", "API101", 2), ("mac_for_dev", "stay_on_cuda", "EXT101", 1)]
    assert census.render_census(table) == ["| label | verdict | deciding key | repos |", "|---|---|---|---|",
                                           "| runs_on_mac | mac_for_dev | API101 | 2 |",
                                           "| mac_for_dev | stay_on_cuda | EXT101 | 1 |"]


def test_main_reads_saved_documents_and_reports_the_missing(tmp_path, capsys):
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"repos": [{"repo": "o/one", "label": "runs_on_mac", "half": "tune"},
                                            {"repo": "o/two", "label": "mac_for_dev", "half": "tune"},
                                            {"repo": "o/three", "label": "mac_for_dev", "half": "held_out"}]}))
    docs = tmp_path / "docs"
    docs.mkdir()
    lim = _finding("EXT101", "k.cu", 1, remedy={"kind": "none"})
    (docs / "one.json").write_text(json.dumps({"outlook": _outlook("stay_on_cuda", [lim], "x"), "findings": [lim]}))
    (docs / "two.json").write_text(json.dumps({"outlook": _outlook("mac_for_dev"), "findings": []}))
    assert census.main(["--set", "s", str(labels), str(docs), "--half", "tune"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["| repo | label | verdict | class | deciding findings (of total) | decided_by |", "|---|---|---|---|---|---|",
                   "| s/o/one | runs_on_mac | stay_on_cuda | too_pessimistic: EXT101 | EXT101 k.cu:1 [none] | x |", "",
                   "| label | verdict | deciding key | repos |", "|---|---|---|---|",
                   "| runs_on_mac | stay_on_cuda | EXT101 | 1 |", "",
                   "| label | verdict | one code or credit | repos |", "|---|---|---|---|",
                   "| runs_on_mac | stay_on_cuda | EXT101 | 1 |"]
    assert census.main(["--set", "s", str(labels), str(docs)]) == 0  # every half: three was never scanned
    assert capsys.readouterr().out.splitlines()[-1] == "no document for: s/three"
    assert census.main(["--set", "s", str(tmp_path / "nope.json"), str(docs)]) == 2

import json

import pytest

from mpsready.findings import Basis, Finding, Location, Scope, Severity, Verdict, at_or_above, sort_findings
from mpsready.schema import check_envelope, envelope


def test_severity_order_and_parse():
    assert [s.rank for s in (Severity.INFO, Severity.DEGRADES, Severity.BLOCKER)] == [0, 1, 2]
    assert Severity.parse(" Blocker ") is Severity.BLOCKER
    with pytest.raises(ValueError, match="expected one of: info, degrades, blocker"):
        Severity.parse("fatal")


def test_verdict_worst_and_names():
    assert Verdict.worst([Verdict.RUNS_ON_MAC, Verdict.STAY_ON_CUDA, Verdict.MAC_FOR_DEV]) is Verdict.STAY_ON_CUDA
    assert Verdict.worst([]) is Verdict.RUNS_ON_MAC
    assert [v.value for v in Verdict] == ["runs_on_mac", "mac_for_dev", "stay_on_cuda"]


def test_finding_round_trip_through_json():
    f = Finding("API101", Severity.DEGRADES, "x.cuda()", Location("a.py", 3, 5), fix="use .to(device)",
                source="torch docs 2.13", scope=Scope.TESTS, evidence={"call": ".cuda()"})
    d = json.loads(json.dumps(f.to_dict()))
    assert d == {"code": "API101", "severity": "degrades", "basis": "predicted", "message": "x.cuda()",
                 "location": {"path": "a.py", "line": 3, "column": 5}, "scope": "tests",
                 "fix": "use .to(device)", "source": "torch docs 2.13", "evidence": {"call": ".cuda()"}}
    assert Finding.from_dict(d) == f
    assert str(f.location) == "a.py:3:5"
    assert str(Location(operator="aten::_linalg_eig", stage="forward")) == "aten::_linalg_eig [forward]"


def test_sort_and_threshold():
    a = Finding("B1", Severity.INFO, "i", Location("z.py", 1))
    b = Finding("A1", Severity.BLOCKER, "b", Location("y.py", 9))
    c = Finding("A2", Severity.DEGRADES, "d", Location("a.py", 2), basis=Basis.OBSERVED)
    assert [f.code for f in sort_findings([a, b, c])] == ["A1", "A2", "B1"]
    assert {f.code for f in at_or_above([a, b, c], Severity.DEGRADES)} == {"A1", "A2"}


def test_envelope_checks():
    doc = envelope("mpsready.scan", 1, outlook="runs_on_mac")
    assert doc["schema"] == {"name": "mpsready.scan", "version": 1}
    assert doc["created"].endswith("Z")
    assert check_envelope(doc, "mpsready.scan", 1) is doc
    with pytest.raises(ValueError, match="expected an mpsready mpsready.record document"):
        check_envelope(doc, "mpsready.record", 1)
    with pytest.raises(ValueError, match="newer than this mpsready understands"):
        check_envelope(envelope("mpsready.scan", 7), "mpsready.scan", 1)

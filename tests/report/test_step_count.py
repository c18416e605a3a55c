"""The time table and PRF101 count the same steps, and both say when step 0 was left out as warm-up."""

from __future__ import annotations

from mpsready.record.layout import RunRecord
from mpsready.record.rules import evaluate
from mpsready.record.timing import step_timing
from mpsready.report.build import build_report
from mpsready.report.evidence import Evidence, record
from mpsready.report.formats import html, markdown
from tests.report import fixtures as fx

def test_three_steps_are_two_measured_in_the_table_and_in_prf101(tmp_path):
    path = fx.write_record(tmp_path / "cpu", "cpu", losses=(2.3, 2.1, 1.9), seconds=(0.5, 0.1, 0.3))
    rec = record.load(path)
    prf101 = next(f for f in evaluate(RunRecord.open(rec.source).manifest) if f.code == "PRF101")
    assert prf101.message == "median step 0.2000 s over 2 step(s) on cpu (step 0 left out as warm-up)"
    assert (prf101.evidence["steps"], prf101.evidence["warmup_steps"], prf101.evidence["median_seconds"]) == (2, 1, 0.2)

    rep = build_report(Evidence(records=[rec]))
    t = rep.outlook.timings[0]
    assert (t.steps_measured, t.warmup_steps, t.step_seconds) == (2, 1, 0.2)
    assert t.to_dict()["steps_measured"] == 2 and t.to_dict()["warmup_steps"] == 1
    assert "| cpu | observed | 200.0 ms | 100.0 ms - 300.0 ms | 2 (step 0 left out as warm-up) | - | - |" in \
        markdown.render(rep)
    assert '<td data-label="steps measured">2 (step 0 left out as warm-up)</td>' in html.render(rep)

def test_two_steps_use_step_1_only_in_both(tmp_path):
    # the report used to take the median of both steps here (0.3 s) while PRF101 took step 1 alone (0.1 s)
    rec = record.load(fx.write_record(tmp_path / "cpu", "cpu", losses=(2.3, 2.1), seconds=(0.5, 0.1)))
    prf101 = next(f for f in evaluate(RunRecord.open(rec.source).manifest) if f.code == "PRF101")
    assert prf101.message == "median step 0.1000 s over 1 step(s) on cpu (step 0 left out as warm-up)"
    t = build_report(Evidence(records=[rec])).outlook.timings[0]
    assert (t.steps_measured, t.warmup_steps, t.step_seconds) == (1, 1, 0.1)

def test_one_step_is_measured_without_a_warm_up_note(tmp_path):
    rec = record.load(fx.write_record(tmp_path / "cpu", "cpu", losses=(2.3,), seconds=(0.5,)))
    prf101 = next(f for f in evaluate(RunRecord.open(rec.source).manifest) if f.code == "PRF101")
    assert prf101.message == "median step 0.5000 s over 1 step(s) on cpu"
    t = build_report(Evidence(records=[rec])).outlook.timings[0]
    assert (t.steps_measured, t.warmup_steps, t.step_seconds, t.steps_text) == (1, 0, 0.5, "1")

def test_step_timing_rule():
    assert step_timing([]) == step_timing(()) and step_timing([]).median_seconds is None
    assert (step_timing([2.0, 1.0, 3.0]).measured, step_timing([2.0, 1.0, 3.0]).note) == \
        ((1.0, 3.0), "step 0 left out as warm-up")

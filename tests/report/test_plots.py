"""Issue 38: the report's plots are SVG with one-sentence captions; the per-layer error runs along the network."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("matplotlib")

from mpsready.report.build import build_report  # noqa: E402
from mpsready.report.evidence import Evidence, compare, trace  # noqa: E402
from mpsready.report.formats import plots  # noqa: E402
from tests.report import fixtures as fx  # noqa: E402


def _rows():
    # the JSON's order is not the network's: the plot sorts by phase, then order (gradients in backward order)
    return [
        {"key": "grad:fc2.weight", "kind": "grad", "order": 0, "step": 0, "status": "fail", "metrics": {"max_abs": 2e-3}},
        {"key": "activation:fc2#0", "kind": "activation", "order": 1, "step": 0, "status": "fail",
         "metrics": {"max_abs": 5e-2}},
        {"key": "activation:fc1#0", "kind": "activation", "order": 0, "step": 0, "status": "pass",
         "metrics": {"max_abs": 0.0}},
        {"key": "activation:fc1#0", "kind": "activation", "order": 0, "step": 1, "status": "fail",
         "metrics": {"max_abs": 1.0}},
    ]


def test_layer_errors_along_the_network_of_the_first_failing_step_as_svg():
    ev = Evidence(compare=compare.from_doc(fx.compare_doc("cuda", "mps", failed=2, rows=_rows())))
    svg, caption = plots.layer_errors(build_report(ev))
    assert svg.startswith(b"<?xml") and b"<svg" in svg
    texts = re.findall(rb"<text[^>]*>([^<]*)</text>", svg)  # text stays text (svg.fonttype none)
    assert b"forward, network order" in texts and b"gradients, backward order" in texts
    assert texts.index(b"fc1#0") < texts.index(b"fc2#0")  # network order, not the JSON's
    assert caption == ("Max absolute error of each tensor along the network, cuda vs mps, step 0, red where out of "
                       "tolerance; the first out of tolerance is activation:fc2#0 (observed).")


def test_the_trace_fallback_plot_says_predicted_and_the_findings_plot_names_its_basis():
    tr = trace.from_doc(fx.trace_doc(fx.CLEAN_OPS + [fx.op("aten::_ctc_loss", "fallback", 2, "2.14")],
                                     fallback_share=0.2))
    report = build_report(Evidence(trace=tr))
    made = plots.all_plots_with_captions(report)
    assert list(made) == ["fallback_share"] + (["findings_by_kind"] if report.all_findings() else [])
    svg, caption = made["fallback_share"]
    assert caption == ("Predicted calls per operator that would run on the CPU through the MPS fallback, about 20% "
                       "of step time in all, from the trace.")
    assert b"aten::_ctc_loss" in svg and b"(predicted)" in svg
    if "findings_by_kind" in made:
        assert "(predicted)" in made["findings_by_kind"][1]


def test_a_stage_svg_is_embedded_as_it_is(tmp_path):
    own = tmp_path / "layer_error.svg"
    own.write_bytes(b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><text>x</text></svg>')
    doc = fx.compare_doc("cuda", "mps", failed=1)
    doc["plots"] = {"layer_error": str(own)}
    made = plots.all_plots_with_captions(build_report(Evidence(compare=compare.from_doc(doc))))
    assert made["layer_errors"][0] == own.read_bytes()
    assert made["layer_errors"][1].startswith("The comparison's own per-layer plot (cuda vs mps)")
    assert plots.stage_plot(str(tmp_path / "missing.svg")) is None
    (tmp_path / "not.svg").write_bytes(b"<html><script>x</script></html>")
    assert plots.stage_plot(str(tmp_path / "not.svg")) is None


def test_run_labels_are_shown_where_the_devices_are():
    doc = fx.compare_doc("cpu", "cpu", failed=1)
    doc["runs"] = {"a": {"device": "cpu", "label": "cpu-eager (cpu)"}, "b": {"device": "cpu", "label": "cpu"}}
    c = compare.from_doc(doc)
    assert (c.label_a, c.label_b, c.devices()) == ("cpu-eager (cpu)", None, "cpu-eager (cpu) vs cpu")
    report = build_report(Evidence(compare=c))
    item5 = next(it for it in report.checklist if it.number == 5)
    assert item5.summary.startswith("cpu-eager (cpu) vs cpu: 1 tensor(s) out of tolerance")

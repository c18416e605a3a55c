"""Issue 38: two recorded runs of the bundled small transformer (examples/tiny_transformer_step.py), one with a
single layer perturbed. The statistics table names that layer first, lists only tensors out of tolerance, and
the runs carry their labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

recorder = pytest.importorskip("mpsready.record.recorder")

from mpsready.cli import main  # noqa: E402

ENTRY = "tests/compare/e2e_entries.py"
ROOT = Path(__file__).resolve().parents[2]
LAYER = "blocks.layers.1.linear2"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("gpt")

    def rec(name, fn, label=None):
        # in this process (isolate=False): the same record as a child writes, without a torch import each
        return recorder.record_entry(f"{ENTRY}:{fn}", device="cpu", steps=1, out=d / name, save_tensors=True,
                                     cwd=str(ROOT), isolate=False, label=label).path

    return {"a": rec("a", "tiny_gpt", label="cpu-baseline"), "b": rec("b", "tiny_gpt_perturbed")}


def _compare(runs, capsys, *extra):
    code = main(["compare", str(runs["a"]), str(runs["b"]), "--no-config", *extra])
    return code, capsys.readouterr().out


def test_the_table_names_the_perturbed_layer_and_lists_only_failing_tensors(runs, capsys):
    code, out = _compare(runs, capsys, "--format", "json", "--label", "cpu-reference", "--label", "cpu-perturbed")
    assert code == 1
    doc = json.loads(out)
    assert doc["first_divergence"]["forward"]["key"] == f"activation:{LAYER}#0"
    assert doc["runs"]["a"]["label"] == "cpu-reference (cpu)" and doc["runs"]["b"]["label"] == "cpu-perturbed (cpu)"
    by_key = {t["key"]: t for t in doc["tensors"]}
    before = by_key["activation:blocks.layers.0.linear2#0"]["metrics"]
    assert before["identical"] and before["max_abs"] == 0.0  # upstream of the change: bit for bit
    hit = by_key[f"activation:{LAYER}#0"]["metrics"]
    assert hit["rel_l2"] > 0 and 0 < hit["median_abs"] <= hit["p99_abs"] <= hit["max_abs"]
    assert hit["mean_abs"] <= hit["max_abs"] and hit["cosine"] < 1.0 and isinstance(hit["worst_index"], int)

    code, md = _compare(runs, capsys, "--format", "md", "--label", "cpu-reference", "--label", "cpu-perturbed")
    assert code == 1
    table = [line for line in md.splitlines() if line.startswith("| 0 | `")]
    failing = [t for t in doc["tensors"] if t["status"] != "pass" and t["step"] == 0]
    assert len(table) == len(failing) and all(line.endswith("| FAIL |") for line in table)
    assert len(table) < len(doc["tensors"])  # the passing ones are counted, not listed
    assert table[0].startswith(f"| 0 | `activation:{LAYER}#0` |")  # network order: the changed layer first
    assert "activation:blocks.layers.0" not in "\n".join(table)  # upstream activations pass (gradients do not)
    assert "| step | tensor | max abs | mean abs | median abs | p99 abs | max rel | mean rel | median rel | p99 rel " \
           "| rel L2 | cosine | worst element (A vs B) |" in md
    passing = len(doc["tensors"]) - len(failing)
    assert f"{len(failing)} out of tolerance listed (step 0, the first with a failure, in network order); " \
           f"{passing} within tolerance there not listed" in md
    assert f"- step 0: {len(failing)} of {len(doc['tensors'])} tensors out of tolerance, first " \
           f"activation:{LAYER}#0, largest max abs error" in md
    assert "| step | A (cpu-reference (cpu)) | B (cpu-perturbed (cpu)) |" in md


def test_all_lists_every_tensor_and_the_record_label_is_the_default(runs, capsys):
    code, md = _compare(runs, capsys, "--format", "md", "--all", "--histogram")
    rows = [line for line in md.splitlines() if line.startswith("| 0 | `")]
    assert any(line.endswith("| identical |") for line in rows) and any(line.endswith("| FAIL |") for line in rows)
    assert "A = cpu-baseline (cpu) " in md and "B = cpu " in md  # record --label; B has none
    assert f"- `activation:{LAYER}#0` (step 0): \\|B - A\\| per decade: [1e-02, 1e-01): 16384" in md


def test_label_usage_errors(runs, capsys):
    assert main(["compare", str(runs["a"]), str(runs["b"]), "--label", "x", "--label", "y", "--label", "z"]) == 2
    assert "--label: give at most one non-empty name per run (A, B)" in capsys.readouterr().err
    assert main(["compare", str(runs["a"]), str(runs["b"]), "--label", " "]) == 2


def test_the_per_layer_plot_jumps_at_the_perturbed_layer(runs, capsys, tmp_path):
    """The plot's data along the network: exact zeros up to the changed layer, an error from it on; the SVG names
    the layer on its axis."""
    from mpsready.compare import compare_records
    from mpsready.compare.formats.plots import FORWARD
    from mpsready.compare.matching import sort_key

    comp = compare_records(runs["a"], runs["b"])
    fwd = sorted([t for t in comp.tensors if t.step == 0 and t.kind in FORWARD and t.kind != "input"], key=sort_key)
    at = next(i for i, t in enumerate(fwd) if t.key == f"activation:{LAYER}#0")
    assert at > 5 and all(t.metrics.max_abs == 0 for t in fwd[:at])
    assert fwd[at].metrics.max_abs > 1e-3 and fwd[at].failed
    assert main(["compare", str(runs["a"]), str(runs["b"]), "--no-config", "--format", "json",
                 "--plots", str(tmp_path / "plots")]) == 1
    svg = (tmp_path / "plots" / "layer_error.svg").read_text()
    assert svg.startswith("<?xml") and f">{LAYER}#0<" in svg

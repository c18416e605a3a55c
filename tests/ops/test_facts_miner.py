"""The facts miner (mpsready.ops.build.facts, issue 33 item 1) on a small fixture release folder: every
TORCH_CHECK with its function, ops, class, message and line; coverage; exit code 2 on a bad folder."""
from __future__ import annotations

import json
from pathlib import Path

from mpsready.ops.build import facts

DATA = Path(__file__).parent / "data" / "facts"
MM = "aten/src/ATen/native/mps/operations/Fixture.mm"


def test_checks_are_mined_with_function_ops_class_and_line():
    doc = facts.mine_release(DATA / "2.5.1", "2.5.1")
    got = [(f["function"], f["ops"], f["kind"], f["message"], f["source"], f["range"]) for f in doc["facts"]]
    assert got == [
        ("cumsum_out_mps", ["cumsum", "cumsum.out"], "macos",
         "MPS does not support cumsum op with int64 input. Support has been added in macOS 13.3",
         f"{MM}:9 @ 2.5.1", "read"),
        ("_mps_linear", ["linear"], "other", "MPS device does not support linear for non-float inputs",
         f"{MM}:14 @ 2.5.1", "read"),
        ("_mps_linear", ["linear"], "rank", "MPS supports tensors with dimensions <= {16} (got {input.dim()})",
         f"{MM}:15 @ 2.5.1", "read"),
    ]
    assert doc["facts"][0]["dtypes"] == ["int64"]
    assert doc["coverage"] == {"mps_kernel_overloads": 3, "overloads_with_a_fact": 3,
                               "overloads_with_a_common_mps_dtype_fact": 0, "overloads_with_a_binary_message": 0,
                               "binary_messages": 0, "binary_messages_tied_to_an_op": 0, "checks_read": 3,
                               "checks_tied_to_an_op": 3, "dtypes_named": ["int64"]}


def test_cli_writes_facts_and_prints_coverage(tmp_path, capsys):
    out = tmp_path / "facts.json"
    assert facts.main(["--sources", str(DATA), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    # release, kernels, with a mined fact, from binary, from common_mps, messages (tied), checks (tied), any, dtypes
    # any fact: 55 with the range factories' dtype checks (arange.start_out, range.out, 2.2-2.5)
    assert text.splitlines()[1].split() == ["2.5.1", "3", "3", "0", "0", "0", "(", "0)", "3", "(", "3)", "55", "21"]
    doc = json.loads(out.read_text())
    assert doc["schema"] == {"name": "mpsready.ops-facts", "version": 1} and list(doc["releases"]) == ["2.5.1"]


def test_bad_sources_exit_2(tmp_path, capsys):
    assert facts.main(["--sources", str(tmp_path / "missing")]) == 2
    assert facts.main(["--sources", str(tmp_path)]) == 2
    (tmp_path / "2.5.1").mkdir()
    assert facts.main(["--sources", str(tmp_path)]) == 2
    assert "no native_functions.yaml" in capsys.readouterr().err


def test_shipped_coverage_counts_every_release():
    cov = facts.shipped_coverage()
    assert cov["2.13.0"]["mps_kernel_overloads"] == 891
    assert all(c["overloads_with_a_dtype_fact"] <= c["mps_kernel_overloads"] for c in cov.values())

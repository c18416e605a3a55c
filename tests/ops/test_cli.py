"""`mpsready ops` command line: lookup, diff, versions, errors (exit codes 0/2)."""

from __future__ import annotations

import json

import pytest

from mpsready.cli import main


def run_json(capsys, *argv):
    rc = main(["ops", *argv, "--format", "json"])
    out = capsys.readouterr().out
    return rc, json.loads(out)


def test_lookup_json_grid_sampler_2d_backward(capsys):
    # yaml: grid_sampler_2d_backward has CPU/CUDA keys only before 2.13.0, MPS from 2.13.0
    rc, doc = run_json(capsys, "aten::grid_sampler_2d_backward", "--torch", "2.5", "--macos", "14.4")
    assert rc == 0
    assert doc["schema"] == {"name": "mpsready.ops", "version": 1}
    assert (doc["basis"], doc["torch"], doc["macos"]) == ("predicted", "2.5.1", "14.4")
    r = doc["results"][0]
    assert (r["op"], r["status"], r["how"], r["cuda"]) == ("aten::grid_sampler_2d_backward", "missing", "yaml:none",
                                                           "kernel")
    assert (r["since_torch"], r["fixed_in"], r["removed_again"], r["torch_min_macos"]) == ("2.13.0", "2.13.0",
                                                                                          False, "12.3")
    assert r["basis"] == "predicted" and r["macos_supported"] is True
    assert r["dtypes"]["refused"] == ["complex128", "float64"]
    assert r["dtypes"]["need_newer_macos"] == {}  # macOS 14.4 >= 14.0: bfloat16/complex64 fine
    assert "not currently implemented for the MPS device" in r["fallback"]["error_text"]
    assert "issues/77764" in r["fallback"]["error_text"]  # <= 2.5 message URL (research note §2.3)
    assert r["fallback"]["with_env"].startswith("runs on the CPU")
    assert len(doc["wheel"]["sha256"]) == 64


def test_lookup_macos_13_lists_bfloat16(capsys):
    rc, doc = run_json(capsys, "aten::add.Tensor", "--torch", "2.7.1", "--macos", "13.5")
    r = doc["results"][0]
    assert r["dtypes"]["need_newer_macos"] == {"bfloat16": "14.0", "complex64": "14.0", "complex32": "14.0"}
    assert r["status"] == "kernel" and r["fallback"]["without_env"] == "runs on MPS"


def test_lookup_too_old_macos(capsys):
    # 2.9.1 needs macOS 14.0 (dylib string, research note §6)
    rc, doc = run_json(capsys, "relu", "--torch", "2.9", "--macos", "13.6")
    assert doc["results"][0]["macos_supported"] is False


def test_lookup_routed_op(capsys):
    rc, doc = run_json(capsys, "aten::_slow_conv2d_forward", "--torch", "2.13")
    r = doc["results"][0]
    assert (r["status"], r["how"]) == ("guard", "curated:MPSFallback.mm")
    assert r["routed_on_mps"]["op"] == "aten::_mps_convolution"


def test_lookup_routed_dropout_names_the_whole_mps_path(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # one table row on one line
    assert main(["ops", "native_dropout", "--torch", "2.13"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "on MPS" in line)
    assert "this call dispatches aten::bernoulli_.float instead" in row
    assert row.rstrip(" │").endswith("; together with aten::empty_like, aten::div_.Scalar, aten::mul.Tensor")


def test_lookup_op_dtype_exception_filtered_by_macos(capsys):
    # common_mps.py 2.11.0: `if MACOS_VERSION < 15.0: UNIMPLEMENTED_XFAILLIST.update({"quantile": None, ...})`
    _, doc = run_json(capsys, "quantile", "--torch", "2.11", "--macos", "14.4")
    r = doc["results"][0]
    assert (r["dtype_exceptions"]["*"]["min_macos"], r["min_macos"], r["op_available_at_macos"]) == (
        "15.0", "15.0", False)
    _, doc = run_json(capsys, "quantile", "--torch", "2.11", "--macos", "15.0")
    assert doc["results"][0]["dtype_exceptions"] == {} and doc["results"][0]["op_available_at_macos"] is True


def test_terminal_output(capsys):
    assert main(["ops", "embedding_renorm_", "--torch", "2.14"]) == 0
    out = capsys.readouterr().out
    assert "cpu_fallback_always" in out and "MPSFallback.mm" in out and "predicted" in out


def test_diff_json(capsys):
    rc, doc = run_json(capsys, "--diff", "2.5", "2.9")
    assert rc == 0 and (doc["from"], doc["to"]) == ("2.5.1", "2.9.1")
    gained = {r["op"] for r in doc["gained_kernel"]}
    # research note §1.2: 2.6 upsample_bicubic2d, 2.8 nanmedian, 2.9 grid_sampler_3d/avg_pool3d/kthvalue
    assert {"aten::upsample_bicubic2d", "aten::nanmedian.dim_values", "aten::grid_sampler_3d",
            "aten::kthvalue.values", "aten::avg_pool3d"} <= gained
    assert doc["min_macos"] == {"from": "12.3", "to": "14.0"}
    assert {"op": "aten::upsample_nearest3d.vec", "from": "cpu_fallback_always", "to": "composite",
            "how": "yaml:implicit"} in doc["other_change"]
    assert doc["summary"]["gained_kernel"] == len(doc["gained_kernel"]) == 160


def test_diff_lost_kernel(capsys):
    # research note §1.2: _pin_memory, is_pinned, argsort.stable dropped their MPS key in 2.5
    _, doc = run_json(capsys, "--diff", "2.4", "2.5")
    assert {r["op"] for r in doc["lost_kernel"]} == {"aten::_pin_memory", "aten::is_pinned", "aten::argsort.stable"}


def test_versions(capsys):
    rc, doc = run_json(capsys, "--versions")
    assert [t["torch"] for t in doc["tables"]][[0, -1][0]] == "2.2.2"
    assert all(len(t["sha256"]) == 64 for t in doc["tables"]) and len(doc["tables"]) == 20


@pytest.mark.parametrize("argv", [["ops"], ["ops", "relu", "--torch", "1.12"], ["ops", "relu", "--macos", "abc"],
                                  ["ops", "relu", "--diff", "2.5", "2.9"], ["ops", "--diff", "2.5", "9.0"],
                                  ["ops", "relu", "--table", "/nonexistent/table.json"]])
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    assert "mpsready ops: error:" in capsys.readouterr().err


def test_dump_installed_refused_off_mac(capsys, monkeypatch):
    monkeypatch.setattr("sys.platform", "linux")
    assert main(["ops", "--dump-installed"]) == 2
    err = capsys.readouterr().err
    assert "only works on macOS" in err and "pitfall 8" in err

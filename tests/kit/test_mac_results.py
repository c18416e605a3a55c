"""report --mac-results with a results archive faked the way the record's Mac fakes are: item 8 from the sign-off
only, the observed evidence merged, predictions set beside observations (disagreements first), learn."""

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import jsonschema
import pytest

from mpsready.cli import main
from mpsready.ops import learned
from mpsready.ops.judge import Judge
from mpsready.record.mps import FLOAT64_REFUSAL
from tests.kit.fake_mac import MACHINE, pack, project, results_archive, results_dir
from tests.report import fixtures as fx


def _kit(tmp_path):
    out = tmp_path / "kit"
    assert main(["kit", str(project(tmp_path / "proj")), "--entry", "step.py:step", "-o", str(out)]) == 0
    return out


SCHEMA = json.loads((Path(__file__).parents[2] / "src/mpsready/report/schema/report-v1.schema.json").read_text())


def _report(capsys, *argv):
    capsys.readouterr()
    main(["report", *argv, "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, SCHEMA)  # item 8 attested or not checked, never observed; the table's shape
    return doc


def test_item8_unsigned_kit_is_not_checked_with_what_leaves(tmp_path, capsys):
    archive = results_archive(tmp_path, _kit(tmp_path))
    item8 = _report(capsys, "--mac-results", str(archive))["checklist"][7]
    assert (item8["status"], item8["basis"], item8["label"]) == ("not_checked", None, "not checked")
    assert item8["summary"].startswith("a person must confirm that the data rules allow this environment; the kit "
                                       "that ran (manifest sha256 ")
    texts = [e["text"] for e in item8["evidence"]]
    assert texts[0] == ("left the lab: 5 project file(s), 169 bytes (README.md, model/__init__.py, model/net.py, "
                        "requirements.txt, step.py), plus mpsready itself and the run script")
    assert texts[1] == ("stayed home: 7 path(s) (1 .gitignore, 1 credentials, 2 data extension, 1 data folder, "
                        "1 not code, 1 notebook): .env, .gitignore, data/, explore.ipynb, model.ckpt, results.csv and "
                        "1 more")


def test_item8_passes_attested_only_on_a_sign_off_of_what_ran(tmp_path, capsys):
    kit = _kit(tmp_path)
    assert main(["kit", "--approve", str(kit), "--by", "Dr. Ada", "--rule", "code may leave, data may not"]) == 0
    approval = json.loads((kit / "APPROVAL.json").read_text())
    doc = _report(capsys, "--mac-results", str(results_archive(tmp_path / "a", kit)))
    item8 = doc["checklist"][7]
    assert (item8["status"], item8["basis"], item8["label"]) == ("passed", "attested", "passed (attested)")
    assert item8["summary"] == (f"signed off by Dr. Ada on {approval['when']} under the rule: code may leave, data "
                                f"may not; the kit that ran matches the signed manifest (sha256 "
                                f"{approval['manifest_sha256'][:12]})")
    assert all(c["basis"] != "observed" or c["number"] != 8 for c in doc["checklist"])
    # a kit file changed after the sign-off: not checked again, naming the file
    (kit / "project" / "step.py").write_text("import os\n")
    item8 = _report(capsys, "--mac-results", str(results_archive(tmp_path / "b", kit)))["checklist"][7]
    assert (item8["status"], item8["basis"]) == ("not_checked", None)
    assert item8["summary"] == ("a person must confirm that the data rules allow this environment: the sign-off by "
                                "Dr. Ada no longer covers what ran (files changed after it: project/step.py)")


def test_item8_sign_off_of_another_manifest_does_not_count(tmp_path, capsys):
    kit = _kit(tmp_path)
    assert main(["kit", "--approve", str(kit), "--by", "Ada", "--rule", "r"]) == 0
    approval = json.loads((kit / "APPROVAL.json").read_text())
    approval["manifest_sha256"] = "0" * 64
    (kit / "APPROVAL.json").write_text(json.dumps(approval))
    item8 = _report(capsys, "--mac-results", str(results_archive(tmp_path, kit)))["checklist"][7]
    assert item8["summary"].endswith("no longer covers what ran (it signed manifest 000000000000, the kit that ran "
                                     f"has {item8['summary'][-13:-1]})")
    assert item8["status"] == "not_checked"


def test_observed_evidence_is_merged(tmp_path, capsys):
    doc = _report(capsys, "--mac-results", str(results_archive(tmp_path)))
    labels = {c["number"]: c["label"] for c in doc["checklist"]}
    item1 = doc["checklist"][0]
    assert (item1["label"], item1["summary"]) == ("failed", "1 declared requirement(s) failed to install on the "
                                                           "Mac: flash-attn==2.5.8")
    assert item1["evidence"][2]["text"] == (f"pip install flash-attn==2.5.8 on {MACHINE} (macOS 14.4.1, torch "
                                            "2.13.0): exit 1")
    assert labels[3] == "passed"  # the Mac's env record: MPS built and available
    assert labels[4] == "failed"  # the step raised NotImplementedError on mps, observed
    assert labels[6] == "failed"  # aten::sin ran on the CPU through the fallback
    item4 = doc["checklist"][3]
    assert item4["workaround"] == "aten::erfinv: PYTORCH_ENABLE_MPS_FALLBACK=1 runs it on the CPU"
    assert doc["stages_present"] == ["env", "record", "compare", "mac-results"]


def _predictions(tmp_path):
    scan = fx.dump(tmp_path / "scan.json", fx.scan_doc(findings=[fx.FLASH_ATTN]))
    trace = fx.dump(tmp_path / "trace.json", fx.trace_doc(
        ops=[fx.op("aten::_ctc_loss.Tensor", "error", fixed_in="2.14.0"), fx.op("aten::erfinv"),
             fx.op("aten::linear"), fx.op("aten::cumsum")],
        findings=[fx.finding("DTY201", message="float64 tensor moved to MPS", path="model.py", line=3)]))
    return ["--scan", str(scan), "--trace", str(trace)]


def test_predicted_vs_observed_lists_disagreements_first_and_counts(tmp_path, capsys):
    doc = _report(capsys, *_predictions(tmp_path), "--mac-results", str(results_archive(tmp_path)))
    vs = doc["predicted_vs_observed"]
    assert (vs["on_mac"], vs["note"]) == (True, None)
    assert vs["observed_on"] == f"{MACHINE} (macOS 14.4.1, torch 2.13.0)"
    assert vs["counts"] == {"agrees": 5, "disagrees": 3, "not observed": 1}
    assert [(r["state"], r["kind"], r["subject"]) for r in vs["rows"]] == [
        ("disagrees", "outlook", "static outlook"),
        ("disagrees", "operator", "aten::_ctc_loss.Tensor"),
        ("disagrees", "operator", "aten::erfinv"),
        ("agrees", "operator", "aten::linear"),
        ("agrees", "dtype", "float64 on MPS"),
        ("agrees", "install", "numpy"),
        ("agrees", "install", "flash-attn"),
        ("agrees", "install", "einops"),
        ("not observed", "operator", "aten::cumsum"),
    ]
    ctc = vs["rows"][1]
    assert (ctc["predicted"], ctc["observed"]) == ("fails on MPS", "runs on MPS (dispatched on mps in the traced step)")
    erf = vs["rows"][2]
    assert erf["observed"] == "fails on MPS (the step's forward stage raised NotImplementedError on mps)"
    assert vs["rows"][4]["observed"] == "refused in test tests/test_model.py::test_double"
    assert vs["rows"][6]["predicted"] == "does not install or work on macOS (DEP101)"
    assert vs["rows"][5]["predicted"] == "installs (no dependency finding)"
    assert vs["rows"][6]["observed"] == "install failed (exit 1)"
    capsys.readouterr()
    main(["report", *_predictions(tmp_path), "--mac-results", str(tmp_path / "results.tar.gz"), "--format", "md"])
    md = capsys.readouterr().out
    assert (f"Observed on {MACHINE} (macOS 14.4.1, torch 2.13.0): 3 disagreement(s), 5 agreement(s), 1 not observed."
            in md)
    assert "| **disagrees** | operator | aten::_ctc_loss.Tensor | fails on MPS |" in md


def test_a_dry_run_archive_observes_nothing_on_a_mac(tmp_path, capsys):
    doc = _report(capsys, *_predictions(tmp_path), "--mac-results",
                  str(results_archive(tmp_path, device="cpu", dry_run=True)))
    vs = doc["predicted_vs_observed"]
    assert vs["counts"] == {"agrees": 0, "disagrees": 0, "not observed": 9}
    assert vs["note"] == "The results come from a dry run on cpu: nothing here was observed on a Mac"


def test_learn_keeps_disagreements_and_the_next_judgement_uses_them(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(learned.DATA_DIR_ENV, str(tmp_path / "data"))
    archive = results_archive(tmp_path)
    capsys.readouterr()
    assert main(["learn", str(archive), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(f["op"], f["status"], f["predicted"]) for f in doc["learned"]] == [
        ("aten::_ctc_loss.Tensor", "runs", "error (missing)"),
        ("aten::erfinv", "error", "runs"),
        ("aten::sin", "fallback", "runs")]
    assert doc["agreements"] == 2  # aten::addmm and aten::linear run, as predicted
    assert doc["learned"][1]["label"] == (f"observed on {MACHINE} (macOS 14.4.1, torch 2.13.0; mpsready learn, "
                                          "results.tar.gz)")
    judge = Judge("2.13.0", "14.6")
    erf = judge.op("aten::erfinv")
    assert (erf.outcome, erf.source) == ("error", doc["learned"][1]["label"])
    assert erf.message.endswith(f"[{doc['learned'][1]['label']}]")
    assert judge.op("aten::_ctc_loss.Tensor").outcome == "runs"
    assert Judge("2.13.0", "15.5").op("aten::erfinv").outcome == "runs"  # another macOS major: the shipped data
    with learned.disabled():
        assert Judge("2.13.0", "14.6").op("aten::erfinv").outcome == "runs"


def test_learn_then_run_predicts_the_observed_failure_labelled_observed(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(learned.DATA_DIR_ENV, str(tmp_path / "data"))
    assert main(["learn", str(results_archive(tmp_path))]) == 0
    prog = tmp_path / "prog.py"
    prog.write_text("import torch\nx = torch.rand(4, device='mps')\ny = torch.erfinv(x)\nprint('done')\n")
    out = tmp_path / "run.json"
    res = subprocess.run([sys.executable, "-m", "mpsready", "run", "--macos", "14.6", "--format", "json", "-o",
                          str(out), "--", sys.executable, str(prog)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, learned.DATA_DIR_ENV: str(tmp_path / "data")})
    doc = json.loads(out.read_text())
    failure = doc["failures"][0]
    assert (failure["op"], failure["exception"]) == ("aten::erfinv", "NotImplementedError"), res.stderr
    assert failure["source"] == (f"observed on {MACHINE} (macOS 14.4.1, torch 2.13.0; mpsready learn, "
                                 "results.tar.gz)")


def test_learn_from_a_dry_run_learns_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(learned.DATA_DIR_ENV, str(tmp_path / "data"))
    capsys.readouterr()
    assert main(["learn", str(results_archive(tmp_path, device="cpu", dry_run=True))]) == 0
    assert capsys.readouterr().out.startswith("learn: nothing learned: ")
    assert not (tmp_path / "data").exists()


def _tar(tmp_path, add):
    path = tmp_path / "evil.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        add(tar)
    return path


def _file(tar, name, data=b"{}"):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _link(tar, name, target, kind=tarfile.SYMTYPE):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    tar.addfile(info)


@pytest.mark.parametrize("add, message", [
    (lambda t: _file(t, "/etc/evil"), "unsafe member name '/etc/evil'"),
    (lambda t: _file(t, "results/../../evil"), "unsafe member name 'results/../../evil'"),
    (lambda t: _file(t, "other/run.json"), "is not under results/"),
    (lambda t: (_link(t, "results/run.json", "/etc/passwd"),), "holds no results/ folder"),
])
def test_unsafe_archives_are_refused_with_exit_2(tmp_path, capsys, add, message):
    archive = _tar(tmp_path, add)
    capsys.readouterr()
    assert main(["report", "--mac-results", str(archive)]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "etc").exists() and not os.path.exists("/tmp/evil")


def test_not_an_archive_is_a_usage_error(tmp_path, capsys):
    bad = tmp_path / "results.tar.gz"
    bad.write_text("not a tar")
    assert main(["report", "--mac-results", str(bad)]) == 2
    assert "cannot open" in capsys.readouterr().err


def test_item8_a_dry_run_of_a_signed_kit_is_not_the_environment_signed_for(tmp_path, capsys):
    kit = _kit(tmp_path)
    assert main(["kit", "--approve", str(kit), "--by", "Ada", "--rule", "r"]) == 0
    archive = results_archive(tmp_path, kit, device="cpu", dry_run=True)
    item8 = _report(capsys, "--mac-results", str(archive))["checklist"][7]
    assert (item8["status"], item8["summary"]) == (
        "not_checked", "a person must confirm that the data rules allow this environment: signed off by Ada, but "
                       "these results come from a dry run on cpu, not from the environment the kit is for")


def test_item5_from_the_kit_reference_comparison(tmp_path, capsys):
    item5 = _report(capsys, "--mac-results", str(results_archive(tmp_path / "a")))["checklist"][4]
    assert (item5["status"], item5["summary"]) == (
        "not_checked", "cpu vs mps agree within tolerance, but MPS was not compared with CUDA")
    item5 = _report(capsys, "--mac-results", str(results_archive(tmp_path / "b", reference_failed=0)))["checklist"][4]
    assert (item5["label"], item5["summary"]) == ("passed", "cuda vs mps: every compared tensor within tolerance")
    item5 = _report(capsys, "--mac-results", str(results_archive(tmp_path / "c", reference_failed=2)))["checklist"][4]
    assert (item5["label"], item5["summary"]) == ("failed", "cuda vs mps: 2 tensor(s) out of tolerance, first at "
                                                            "activation:blocks.1")


def test_deployment_needs_a_sign_off_not_an_observation(tmp_path, capsys):
    doc = _report(capsys, "--mac-results", str(results_archive(tmp_path)), "--situation", "deployment")
    reason = next(r for r in doc["verdict"]["reasons"] if r["item"] == 8)
    assert reason["text"].startswith("item 8 (data handling) not checked, critical: runs_on_mac needs a person's "
                                     "sign-off (a person must confirm")
    assert any(w.startswith("checking item 8 (data handling) by a person's sign-off: mpsready kit PATH")
               or w.startswith("checking item 8 (data handling) by a person's sign-off: a person reads MANIFEST.md")
               for w in doc["verdict"]["would_change"])


def test_report_kit_shows_what_would_leave_before_anything_ran(tmp_path, capsys):
    kit = _kit(tmp_path)
    doc = _report(capsys, "--kit", str(kit))
    item8 = doc["checklist"][7]
    assert (item8["status"], item8["basis"]) == ("not_checked", None)
    assert item8["summary"].startswith("a person must confirm that the data rules allow this environment; the kit "
                                       "(manifest sha256 ")
    assert item8["summary"].endswith(", not signed off) has not run yet")
    assert item8["evidence"][0]["text"].startswith("would leave the lab: 5 project file(s), 169 bytes")
    assert doc["predicted_vs_observed"] is None and doc["stages_present"] == ["kit"]
    assert main(["kit", "--approve", str(kit), "--by", "Ada", "--rule", "r"]) == 0
    item8 = _report(capsys, "--kit", str(kit))["checklist"][7]
    assert item8["summary"].endswith(", signed off by Ada) has not run yet") and item8["status"] == "not_checked"
    capsys.readouterr()
    assert main(["report", "--kit", str(tmp_path / "proj")]) == 2
    assert "holds no readable manifest.json" in capsys.readouterr().err


def test_archive_limits_are_counted(tmp_path, capsys, monkeypatch):
    from mpsready.kit import archive as kit_archive

    path = _tar(tmp_path, lambda t: (_file(t, "results/run.json", b"x" * 100), _file(t, "results/b", b"y" * 100)))
    monkeypatch.setattr(kit_archive, "MAX_FILE_BYTES", 10)
    assert main(["report", "--mac-results", str(path)]) == 2
    assert "results/run.json: 100 bytes, above the 10-byte limit" in capsys.readouterr().err
    monkeypatch.setattr(kit_archive, "MAX_FILE_BYTES", 1000)
    monkeypatch.setattr(kit_archive, "MAX_TOTAL_BYTES", 150)
    assert main(["report", "--mac-results", str(path)]) == 2
    assert "results/b: more bytes than the archive's limits allow" in capsys.readouterr().err
    monkeypatch.setattr(kit_archive, "MAX_MEMBERS", 1)
    assert main(["report", "--mac-results", str(path)]) == 2
    assert "more than 1 members" in capsys.readouterr().err


def _emulated_tests(tmp_path):
    from mpsready.pytest_plugin.document import build_document

    def entry(nodeid, mac, failures=(), markers=()):
        return {"nodeid": nodeid, "markers": list(markers), "outcome": "failed" if mac == "mac_failure" else "passed",
                "mac": mac, "failed_by_mac": mac == "mac_failure", "failures": list(failures), "fallbacks": [],
                "wrong_results": [], "expected_failures": [], "mps_used": mac != "no_mps", "ops_judged": 1,
                "seconds": 0.1}

    f64 = {"kind": "dtype", "op": "aten::_to_copy", "dtype": "float64", "exception": "TypeError",
           "message": "Cannot convert a MPS Tensor to float64 dtype", "location": None}
    tests = [entry("tests/test_model.py::test_double", "mac_failure", [f64], ["mps_mac"]),
             entry("tests/test_model.py::test_shapes", "clean"),
             entry("tests/test_model.py::test_loss", "clean"),  # the Mac failed it: a disagreement
             entry("tests/test_model.py::test_unseen", "fallback"),  # never ran on the Mac
             entry("tests/test_model.py::test_io", "no_mps")]  # says nothing about MPS: no row
    doc = build_document({"torch": "2.13", "torch_requested": "2.13", "macos": "15.5", "fallback": False,
                          "mps_available": True}, tests, "mac-failure", [], str(tmp_path))
    return fx.dump(tmp_path / "emulated-tests.json", doc)


def test_the_emulated_suite_is_set_beside_the_tests_the_mac_ran(tmp_path, capsys):
    res = results_dir(tmp_path / "mac")
    doc = json.loads((res / "tests.json").read_text())  # the Mac also failed a test the emulated Mac passed
    doc["tests"].append({"nodeid": "tests/test_model.py::test_loss", "outcome": "failed", "exception": "RuntimeError",
                         "message": "MPSGraph does not support tensor dims larger than INT_MAX", "markers": []})
    doc["tests"][0]["markers"] = ["mps_mac"]
    (res / "tests.json").write_text(json.dumps(doc))
    archive = pack(res, tmp_path / "results.tar.gz")
    out = _report(capsys, "--tests", str(_emulated_tests(tmp_path)), "--mac-results", str(archive))
    rows = [(r["state"], r["subject"], r["predicted"], r["observed"]) for r in out["predicted_vs_observed"]["rows"]
            if r["kind"] == "test"]
    assert rows == [
        ("disagrees", "tests/test_model.py::test_loss", "passes on MPS",
         "failed (RuntimeError: MPSGraph does not support tensor dims larger than INT_MAX)"),
        ("agrees", "tests/test_model.py::test_double [mps_mac]", "fails on the Mac (aten::_to_copy)",
         f"failed (TypeError: {FLOAT64_REFUSAL[:120]})"),
        ("agrees", "1 test(s) predicted to pass on MPS", "pass on MPS", "passed on the Mac"),
        ("not observed", "1 test(s) predicted to pass on MPS", "pass on MPS", None),
    ]

"""The effort summary shown by scan and report: auto-fixable, manual, needing no change, files touched."""

import json

from mpsready.cli import main
from mpsready.findings import Finding, Location, Severity
from mpsready.migrate.fixability import bucket, effort
from mpsready.rules import autofix_of, render_markdown

SOURCE = ("import torch\n"
          "backend = 'nccl'\n"
          "model = torch.nn.Linear(2, 2).cuda()\n"
          "torch.cuda.synchronize()\n"
          "print(torch.cuda.get_device_name(0))\n"
          "torch.backends.cudnn.benchmark = True\n"
          "if torch.cuda.is_available():\n"
          "    torch.cuda.synchronize()\n"
          "torch.distributed.init_process_group(backend)\n")


def _finding(code, severity="blocker", message="m", **evidence):
    return Finding(code, Severity(severity), message, Location("a.py", 1, 1), evidence=evidence)


def test_buckets():
    assert bucket(_finding("API101"))[0] == "auto"
    assert bucket(_finding("API101", guarded=True)) == ("kept", "already behind a CUDA check: skipped on a Mac")
    assert bucket(_finding("API102", api="torch.cuda.synchronize"))[0] == "auto"
    assert bucket(_finding("API102", api="torch.cuda.get_device_name")) == (
        "manual", "torch.cuda.get_device_name has no drop-in MPS equivalent")
    # harmless on a Mac: needs no change (migrate still adds torch.mps.manual_seed beside it)
    assert bucket(_finding("API102", "info", api="torch.cuda.manual_seed"))[0] == "kept"
    assert bucket(_finding("API119", message="set_default_tensor_type('torch.cuda.FloatTensor'): x"))[0] == "auto"
    assert bucket(_finding("API119", message="set_default_device('cuda:1'): x"))[0] == "auto"
    assert bucket(_finding("API119", message="set_default_tensor_type('torch.cuda.HalfTensor'): x"))[0] == "manual"
    assert bucket(_finding("API103", message="device = 'cuda:{rank}': a hard-coded CUDA device"))[0] == "auto"
    assert bucket(_finding("API103", message="device = 'cuda:{a}{b}': a hard-coded CUDA device"))[0] == "manual"
    assert bucket(_finding("EXT108"))[0] == "auto"
    assert bucket(_finding("API120"))[0] == "manual"
    assert bucket(_finding("EXT109", "info"))[0] == "manual"
    assert bucket(_finding("API121"))[0] == "other"  # a config value: the outlook prints the override
    assert bucket(_finding("API105", "info"))[0] == "kept"
    assert bucket(_finding("API107", message="init_process_group with backend 'nccl' (backend assigned at line 2)"))[0] \
        == "manual"
    assert bucket(_finding("DTY101"))[0] == "manual"
    assert bucket(_finding("DEP101")) == ("other", "")


def test_scan_json_carries_the_effort(tmp_path, capsys):
    (tmp_path / "t.py").write_text(SOURCE)
    main(["scan", str(tmp_path), "--format", "json", "--no-cache"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["effort"] == {"auto_fixable": 2, "manual": 2, "kept": 2, "files_touched": 1, "basis": "estimate"}


def test_scan_terminal_and_markdown_show_the_effort(tmp_path, capsys):
    (tmp_path / "t.py").write_text(SOURCE)
    main(["scan", str(tmp_path), "--no-cache"])
    expected = "migrate effort (estimate): 2 auto-fixable finding(s) in 1 file(s)"
    assert expected in " ".join(capsys.readouterr().out.split())
    main(["scan", str(tmp_path), "--format", "md", "--no-cache"])
    assert (expected + " (`mpsready migrate PATH` shows the diff), 2 manual, 2 need no change\n") in capsys.readouterr().out


def test_after_migrate_the_rescan_has_no_auto_fixable_finding(tmp_path, capsys):
    (tmp_path / "t.py").write_text(SOURCE)
    assert main(["migrate", str(tmp_path), "--apply"]) == 0
    capsys.readouterr()
    main(["scan", str(tmp_path), "--format", "json", "--no-cache"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["effort"]["auto_fixable"] == 0
    assert doc["effort"]["manual"] == 2


def test_registry_marks_auto_fixable_rules_and_docs_render_them():
    assert autofix_of("API101") is not None and autofix_of("DTY101") is None
    text = render_markdown()
    assert "**Auto-fixable** with `mpsready migrate`." in text
    section = text.split("## API113 ")[1].split("\n## ")[0]
    assert "Before:\n\n```python\nDataLoader(ds, pin_memory=True)\n```" in section
    assert "After:\n\n```python\nDataLoader(ds, pin_memory=torch.cuda.is_available())\n```" in section


def test_effort_counts_files_once():
    fs = [_finding("API101"), _finding("API101"), _finding("DTY101")]
    assert effort(fs) == {"auto_fixable": 2, "manual": 1, "kept": 0, "files_touched": 1}


def test_report_names_mpsready_migrate_for_the_code_blockers_it_fixes():
    from mpsready.report.build import build_report
    from mpsready.report.evidence import Evidence, scan
    from tests.report import fixtures as fx

    findings = [
        {"code": "API101", "severity": "blocker", "message": ".cuda()", "location": {"path": "train.py", "line": 3}},
        {"code": "API101", "severity": "blocker", "message": ".cuda()", "location": {"path": "train.py", "line": 4}},
        {"code": "API110", "severity": "blocker", "message": "graphs", "location": {"path": "model.py", "line": 9}},
    ]
    rep = build_report(Evidence(scan=scan.from_doc(fx.scan_doc(findings, outlook="mac_for_dev"))))
    assert ("`mpsready migrate PATH` rewrites 2 of the code finding(s) marked blocker (API101) automatically (review "
            "its diff, then --apply), which removes them from the static blockers; migrate effort (estimate): 2 "
            "auto-fixable finding(s) in 1 file(s) (`mpsready migrate PATH` shows the diff), 1 manual, 0 need no change"
            ) in rep.verdict.would_change
    # a scan document that carries its effort: the report prints those numbers, not a second computation
    doc = fx.scan_doc(findings, outlook="mac_for_dev")
    doc["effort"] = {"auto_fixable": 5, "manual": 3, "kept": 1, "files_touched": 2, "basis": "estimate"}
    rep = build_report(Evidence(scan=scan.from_doc(doc)))
    assert any(line.endswith("migrate effort (estimate): 5 auto-fixable finding(s) in 2 file(s) (`mpsready migrate "
                             "PATH` shows the diff), 3 manual, 1 need no change") for line in rep.verdict.would_change)
    assert ("fixing the 1 other code finding(s) marked blocker (API110) by hand, as their fix hints say, removes them "
            "from the static blockers") in rep.verdict.would_change

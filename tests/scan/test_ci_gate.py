"""Issue 37: a gate a CUDA project can adopt (baseline, --add-noqa, per-file and per-scope ignores), a grammar
that never passes a file it could not read, and output made for logs (concise, piped, statistics, GitLab,
GitHub within its limits)."""

from __future__ import annotations

import json
import sys

import pytest

from mpsready.cli import main
from mpsready.scan import ScanConfig, scan_path

TRAIN = """import torch

model = torch.nn.Linear(4, 4).cuda()
x = torch.ones(2, 4).cuda()
torch.cuda.synchronize()
"""
TEST = """import torch

def test_step():
    y = torch.zeros(3).cuda()
    assert y.sum() == 0
"""


@pytest.fixture
def cuda_project(tmp_path):
    proj = tmp_path / "proj"
    (proj / "tests").mkdir(parents=True)
    (proj / "requirements.txt").write_text("torch\n")
    (proj / "train.py").write_text(TRAIN)
    (proj / "tests" / "test_step.py").write_text(TEST)
    return proj


def _scan(proj, *extra):
    return main(["scan", str(proj), "--no-cache", "--format", "concise", *extra])


def test_baseline_gate_fails_only_on_what_is_new(cuda_project, tmp_path, capsys):
    base = tmp_path / "mpsready-baseline.json"
    assert _scan(cuda_project) == 1  # a CUDA project fails the plain gate
    capsys.readouterr()
    assert _scan(cuda_project, "--write-baseline", str(base)) == 0
    doc = json.loads(base.read_text())
    assert doc["schema"] == {"name": "mpsready.baseline", "version": 1}
    assert sorted((r["code"], r["path"], r["line"]) for r in doc["findings"]) == [
        ("API101", "tests/test_step.py", 4), ("API101", "train.py", 3), ("API101", "train.py", 4),
        ("API102", "train.py", 5)]
    capsys.readouterr()

    # unchanged: passes, and says what it held back
    assert _scan(cuda_project, "--baseline", str(base)) == 0
    out = capsys.readouterr().out
    assert f"baseline {base}: 0 new finding(s) gated, 4 known finding(s) not shown, 0 fixed since the baseline" in out

    # lines moved by an unrelated edit above them: still known
    (cuda_project / "train.py").write_text('"""Train."""\n# a comment\n\n' + TRAIN)
    assert _scan(cuda_project, "--baseline", str(base)) == 0
    capsys.readouterr()

    # a new .cuda() in a commit fails, and only it is shown
    (cuda_project / "train.py").write_text('"""Train."""\n# a comment\n\n' + TRAIN + "z = torch.eye(2).cuda()\n")
    assert _scan(cuda_project, "--baseline", str(base)) == 1
    out = capsys.readouterr().out
    findings = [line for line in out.splitlines() if ": API" in line and "[blocker]" in line]
    assert findings == ["train.py:9:5: API101 [blocker] .cuda() moves to CUDA; on a Mac it raises 'Torch not compiled "
                        "with CUDA enabled'"]
    # the outlook is the project's, not the baseline's
    assert "static outlook: Mac for development and tests, CUDA for the main work (mac_for_dev)" in out

    # a fixed finding is counted
    (cuda_project / "tests" / "test_step.py").write_text("def test_step():\n    assert True\n")
    (cuda_project / "train.py").write_text(TRAIN)
    assert _scan(cuda_project, "--baseline", str(base)) == 0
    assert "0 new finding(s) gated, 3 known finding(s) not shown, 1 fixed since the baseline" in capsys.readouterr().out


@pytest.mark.parametrize("content, message", [
    ("{not json", "not an mpsready baseline"),
    ('{"schema": {"name": "mpsready.scan", "version": 1}}', "expected an mpsready mpsready.baseline document"),
    ('{"schema": {"name": "mpsready.baseline", "version": 1}, "findings": [{"code": "API101"}]}',
     "'findings' must be a list of entries with a 'fingerprint'"),
])
def test_a_bad_baseline_is_a_usage_error_before_any_work(cuda_project, tmp_path, capsys, content, message):
    base = tmp_path / "b.json"
    base.write_text(content)
    assert _scan(cuda_project, "--baseline", str(base)) == 2
    assert message in capsys.readouterr().err


def test_a_baseline_that_is_a_fifo_is_refused_without_blocking(cuda_project, tmp_path, capsys):
    import os

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert _scan(cuda_project, "--baseline", str(fifo)) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_add_noqa_writes_directives_that_silence_each_finding(cuda_project, capsys):
    (cuda_project / "train.py").write_text(
        "import torch\n"
        "model = torch.nn.Linear(4, 4).cuda()  # the model\n"
        "x = torch.ones(2).cuda()  # mpsready: ignore[API102]\n"
        "torch.cuda.synchronize()\n"
        "doc = f'''{torch.ones(1).cuda()}\n"
        "'''\n")
    assert main(["scan", str(cuda_project), "--no-cache", "--add-noqa"]) == 0
    err = capsys.readouterr().err
    assert "added 4 '# mpsready: ignore[...]' comment(s) in 2 file(s)" in err
    assert "not added at train.py:5: the line ends inside a multi-line" in err
    assert (cuda_project / "train.py").read_text() == (
        "import torch\n"
        "model = torch.nn.Linear(4, 4).cuda()  # the model  # mpsready: ignore[API101]\n"
        "x = torch.ones(2).cuda()  # mpsready: ignore[API101, API102]\n"
        "torch.cuda.synchronize()  # mpsready: ignore[API102]\n"
        "doc = f'''{torch.ones(1).cuda()}\n"
        "'''\n")
    assert (cuda_project / "tests" / "test_step.py").read_text().splitlines()[3] == \
        "    y = torch.zeros(3).cuda()  # mpsready: ignore[API101]"
    result = scan_path(cuda_project, ScanConfig())
    assert [(f.code, f.location.path, f.location.line) for f in result.findings if f.code.startswith("API")] == \
        [("API101", "train.py", 5)]
    assert result.suppressed == 4


def test_per_file_and_scope_ignores_narrow_the_report_not_the_outlook(cuda_project, capsys):
    plain = scan_path(cuda_project, ScanConfig())
    (cuda_project / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["torch"]\n'
        '[tool.mpsready]\nignore-scopes = ["tests"]\nper-file-ignores = {"train.py" = ["API102"]}\n')
    narrowed = scan_path(cuda_project, ScanConfig())
    assert [(f.code, f.location.path, f.location.line) for f in narrowed.findings if f.code.startswith("API")] == [
        ("API101", "train.py", 3), ("API101", "train.py", 4)]
    assert narrowed.config_ignored == 2
    assert narrowed.outlook == plain.outlook
    assert [f.code for f in narrowed.limiting] == [f.code for f in plain.limiting]
    assert main(["scan", str(cuda_project), "--no-cache", "--format", "concise"]) == 1
    assert ("2 finding(s) not reported by per-file-ignores / ignore-scopes / the project's select, ignore, exclude (the "
            "outlook still counts them)"
            in capsys.readouterr().out)


def test_ignore_scopes_on_the_command_line_and_a_bad_scope(cuda_project, capsys):
    assert main(["scan", str(cuda_project), "--no-cache", "--format", "concise", "--ignore-scopes", "tests"]) == 1
    out = capsys.readouterr().out
    assert "tests/test_step.py" not in out.split("fix ")[0]
    assert main(["scan", str(cuda_project), "--no-cache", "--ignore-scopes", "nowhere"]) == 2
    assert "--ignore-scopes: give scopes among" in capsys.readouterr().err


def test_a_bad_per_file_ignores_value_is_a_finding_and_a_bad_code_an_error(cuda_project, capsys):
    (cuda_project / "pyproject.toml").write_text('[tool.mpsready]\nper-file-ignores = ["tests/*"]\n')
    r = scan_path(cuda_project, ScanConfig())
    assert [f.message for f in r.findings if f.code == "INP111"] == [
        "[tool.mpsready] per-file-ignores = ['tests/*'] ignored: expected a table of glob = [\"CODE\", ...]"]
    (cuda_project / "pyproject.toml").write_text('[tool.mpsready]\nper-file-ignores = {"tests/*" = ["API10"]}\n')
    assert main(["scan", str(cuda_project), "--no-cache"]) == 2
    assert "unknown rule code or prefix 'API10'" in capsys.readouterr().err


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the file's syntax is this interpreter's own from 3.12 on")
def test_newer_syntax_under_an_older_interpreter_is_incomplete_and_fails(tmp_path, capsys):
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / "requirements.txt").write_text("torch\n")
    (proj / "train.py").write_text("import torch\ntype Batch = dict[str, torch.Tensor]\n")
    r = scan_path(proj, ScanConfig())
    ver = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert [(f.code, f.location.line, f.severity.value) for f in r.findings] == [("INP117", 2, "info")]
    assert r.findings[0].message.startswith(f"written for a newer Python than {ver} (")
    assert r.incomplete == ["train.py"]
    assert main(["scan", str(proj), "--no-cache", "--format", "concise"]) == 1
    out = capsys.readouterr().out
    assert "static outlook: runs on Mac (runs_on_mac) for the files read only (1 not read: incomplete)" in out
    assert out.rstrip().endswith("exit 1: the outlook is incomplete: 1 main-path file could not be read or parsed "
                                 "(train.py), and a gate never passes on a partial read (pass --exit-zero to exit 0)")


def test_a_file_no_parser_reads_is_incomplete_and_fails_on_any_interpreter(tmp_path, capsys):
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / "requirements.txt").write_text("torch\n")
    (proj / "train.py").write_text("import torch\ndef broken(:\n")
    r = scan_path(proj, ScanConfig())
    assert [(f.code, f.location.line) for f in r.findings] == [("INP105", 2)]
    assert r.failed() is True
    assert main(["scan", str(proj), "--no-cache", "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["outlook"]["complete"] is False
    assert main(["scan", str(proj), "--no-cache", "--exit-zero"]) == 0


def test_piped_terminal_output_is_one_line_per_finding_without_trailing_spaces(cuda_project, capsys):
    assert main(["scan", str(cuda_project), "--no-cache"]) == 1
    out = capsys.readouterr().out
    root = str(cuda_project)
    assert out.replace(root, "ROOT") == (
        "blocker (4)\n"
        "tests/test_step.py:4:9: API101 [blocker] .cuda() moves to CUDA; on a Mac it raises 'Torch not compiled "
        "with CUDA enabled' (scope: tests)\n"
        "train.py:3:9: API101 [blocker] .cuda() moves to CUDA; on a Mac it raises 'Torch not compiled with CUDA "
        "enabled'\n"
        "train.py:4:5: API101 [blocker] .cuda() moves to CUDA; on a Mac it raises 'Torch not compiled with CUDA "
        "enabled'\n"
        "train.py:5:1: API102 [blocker] torch.cuda.synchronize: raises 'Torch not compiled with CUDA enabled' on a "
        "Mac\n"
        + "".join(line + "\n" for line in out.replace(root, "ROOT").splitlines()[5:]))
    lines = out.splitlines()
    assert all(line == line.rstrip() for line in lines)
    assert sum(1 for line in lines if line.startswith("fix API101 (3): ")) == 1  # once, not once per finding
    assert lines[-1].startswith("exit 1: 4 findings at or above blocker")


def test_statistics_counts_per_rule(cuda_project, capsys):
    assert main(["scan", str(cuda_project), "--no-cache", "--statistics"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("3  API101  dot-cuda-call  [blocker]  ")
    assert lines[1].startswith("1  API102  torch-cuda-api  [blocker]  ")
    assert main(["scan", str(cuda_project), "--no-cache", "--statistics", "--format", "json"]) == 2


def test_gitlab_code_quality_report(cuda_project, capsys):
    assert main(["scan", str(cuda_project), "--no-cache", "--format", "gitlab"]) == 1
    issues = json.loads(capsys.readouterr().out)
    api = [i for i in issues if i["check_name"].startswith("API")]
    assert [(i["check_name"], i["severity"], i["location"]) for i in api] == [
        ("API101 dot-cuda-call", "blocker", {"path": "tests/test_step.py", "lines": {"begin": 4}}),
        ("API101 dot-cuda-call", "blocker", {"path": "train.py", "lines": {"begin": 3}}),
        ("API101 dot-cuda-call", "blocker", {"path": "train.py", "lines": {"begin": 4}}),
        ("API102 torch-cuda-api", "blocker", {"path": "train.py", "lines": {"begin": 5}}),
    ]
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    assert all(set(i) >= {"description", "check_name", "fingerprint", "severity", "location"} for i in issues)


def test_github_annotations_stay_within_the_limits_and_write_a_job_summary(tmp_path, capsys, monkeypatch):
    proj = tmp_path / "big"
    proj.mkdir()
    (proj / "requirements.txt").write_text("torch\n")
    for n in range(4):
        (proj / f"m{n}.py").write_text("import torch\n" + "".join(f"t{i} = torch.ones({i}).cuda()\n" for i in range(30)))
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["scan", str(proj), "--no-cache", "--format", "github"]) == 1
    lines = capsys.readouterr().out.splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 4  # 120 findings of one rule in 4 files: one annotation per rule and file
    assert "title=API101 dot-cuda-call::API101 x30 in this file (also at lines 3, 4, 5," in errors[0]
    assert sum(1 for line in lines if line.startswith("::warning ")) <= 10
    assert sum(1 for line in lines if line.startswith("::notice ")) <= 10
    text = summary.read_text()
    assert text.startswith("earlier step\n")
    assert "mac_for_dev" in text and "API101" in text

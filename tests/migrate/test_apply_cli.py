"""``--apply`` writes atomically and refuses a file changed since the scan; the CLI prints a diff and writes nothing by default."""

import json
import os
import subprocess
import sys
from pathlib import Path

from mpsready.cli import main
from mpsready.migrate.apply import apply_plan
from mpsready.migrate.engine import migrate_path
from mpsready.scan import ScanConfig

SOURCE = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()  # keep me\n"
MIGRATED_LINE = "model = torch.nn.Linear(2, 2).to(_mpsready_device())  # keep me\n"


def _project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(SOURCE)
    (tmp_path / "clean.py").write_text("import torch\nx = torch.ones(1)\n")
    return tmp_path


def test_default_prints_a_unified_diff_and_writes_nothing(tmp_path, capsys):
    root = _project(tmp_path)
    assert main(["migrate", str(root)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("--- a/train.py\n+++ b/train.py\n@@ ")
    assert "-model = torch.nn.Linear(2, 2).cuda()  # keep me\n" in out
    assert "+" + MIGRATED_LINE in out
    assert "clean.py" not in out
    assert "1 edit in 1 file (API101 1) fixing 1 scan finding(s);" in err
    assert "nothing written" in err
    assert (root / "train.py").read_text() == SOURCE


def test_the_diff_applies_with_patch(tmp_path, capsys):
    root = _project(tmp_path)
    main(["migrate", str(root)])
    diff = capsys.readouterr().out
    done = subprocess.run(["patch", "-p1", "-s"], input=diff, text=True, cwd=root, capture_output=True)
    if done.returncode == 127:  # pragma: no cover - patch missing
        return
    assert done.returncode == 0, done.stderr
    assert MIGRATED_LINE in (root / "train.py").read_text()


def test_apply_writes_in_place_and_keeps_the_file_mode(tmp_path, capsys):
    root = _project(tmp_path)
    os.chmod(root / "train.py", 0o640)
    assert main(["migrate", str(root), "--apply"]) == 0
    text = (root / "train.py").read_text()
    assert MIGRATED_LINE in text and "def _mpsready_device(index=None):" in text
    assert oct((root / "train.py").stat().st_mode & 0o777) == "0o640"
    assert [p.name for p in root.iterdir() if "mpsready-tmp" in p.name] == []
    assert "written: 1 file: train.py" in capsys.readouterr().err


def test_apply_refuses_a_file_changed_since_the_scan(tmp_path):
    root = _project(tmp_path)
    plan = migrate_path(root, config=ScanConfig(cache_dir=None))
    (root / "train.py").write_text(SOURCE + "y = 1\n")  # someone edits it meanwhile
    result = apply_plan(plan)
    assert result.written == []
    assert result.refused == ["train.py: changed since the scan; not touched (run mpsready migrate again)"]
    assert (root / "train.py").read_text() == SOURCE + "y = 1\n"


def test_cli_exit_1_and_says_so_when_a_file_is_refused(tmp_path, capsys, monkeypatch):
    root = _project(tmp_path)
    import mpsready.migrate.apply as apply_mod

    real = apply_mod.apply_plan

    def racing(plan):
        (root / "train.py").write_text("changed\n")
        return real(plan)

    monkeypatch.setattr(apply_mod, "apply_plan", racing)
    assert main(["migrate", str(root), "--apply"]) == 1
    assert "refused: train.py: changed since the scan" in capsys.readouterr().err
    assert (root / "train.py").read_text() == "changed\n"


def test_json_format(tmp_path, capsys):
    root = _project(tmp_path)
    assert main(["migrate", str(root), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == {"name": "mpsready.migrate", "version": 1}
    assert doc["summary"] == {"edits": 1, "files": 1, "manual": 0, "kept": 0, "not_parsed": 0, "fixed": 1, "rounds": 2,
                              "effort": {"auto_fixable": 1, "manual": 0, "kept": 0, "files_touched": 1, "basis": "plan"}}
    assert doc["files"][0]["path"] == "train.py"
    assert doc["files"][0]["edits"] == [{"code": "API101", "line": 2, "what": ".cuda() -> .to(_mpsready_device())"}]
    assert doc["fixed"] == [{"code": "API101", "path": "train.py", "line": 2}]
    assert doc["diff"].startswith("--- a/train.py\n")
    assert (root / "train.py").read_text() == SOURCE


def test_select_and_ignore(tmp_path, capsys):
    (tmp_path / "t.py").write_text("import torch\nx = torch.ones(1).cuda()\ntorch.cuda.synchronize()\n")
    assert main(["migrate", str(tmp_path), "--select", "API102"]) == 0
    out = capsys.readouterr().out
    assert "torch.mps.synchronize()" in out and ".to(" not in out
    assert main(["migrate", str(tmp_path), "--ignore", "API102"]) == 0
    out = capsys.readouterr().out
    assert "torch.mps.synchronize()" not in out and ".to(_mpsready_device())" in out


def test_unknown_codes_are_a_usage_error_as_in_scan(tmp_path, capsys):
    (tmp_path / "t.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    assert main(["migrate", str(tmp_path), "--select", "FOO"]) == 2
    assert "--select: unknown rule code or prefix 'FOO'" in capsys.readouterr().err
    assert main(["migrate", str(tmp_path), "--ignore", "api101,API10"]) == 2  # a prefix that matches no rule
    assert "--ignore: unknown rule code or prefix 'API10'" in capsys.readouterr().err
    assert (tmp_path / "t.py").read_text() == "import torch\nx = torch.ones(1).cuda()\n"


def test_missing_path_is_a_usage_error(tmp_path, capsys):
    assert main(["migrate", str(tmp_path / "nope")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_a_file_libcst_cannot_parse_is_listed_and_left_alone(tmp_path, capsys):
    (tmp_path / "ok.py").write_text(SOURCE)
    (tmp_path / "bad.py").write_text("print 'python 2'\nx = torch.load(f)\n")
    assert main(["migrate", str(tmp_path), "--apply"]) == 0
    err = capsys.readouterr().err
    assert (tmp_path / "bad.py").read_text() == "print 'python 2'\nx = torch.load(f)\n"
    assert "  not parsed: bad.py: libcst cannot parse it (" in err
    assert MIGRATED_LINE in (tmp_path / "ok.py").read_text()
    assert "written: 1 file: ok.py" in err


def test_migrate_does_not_import_torch():
    code = "import sys; from mpsready.cli import main; main(['migrate', sys.argv[1]]); print('torch' in sys.modules)"
    tmp = Path(__file__).parent / "fixtures" / "api101_dot_cuda.py"
    out = subprocess.run([sys.executable, "-c", code, str(tmp)], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "False"

"""``migrate --verify -- python missing.py`` (builder h40, 2026-12-07): a usage error before anything runs (exit 2),
as for a missing notebook and as ``mpsready run -- python missing.py`` says; it ran every CPU and emulated Mac run
(10 s here) and ended ``verified: no``, exit 1, with Python's "can't open file" from the temporary copies."""
from __future__ import annotations

import pytest

from mpsready.cli import main
from mpsready.errors import UsageError
from mpsready.migrate.verify_notebook import check_script


@pytest.mark.parametrize(("command", "script"), [
    (["python", "missing.py"], "missing.py"),
    (["python3", "-u", "missing.py", "--epochs", "1"], "missing.py"),
    (["python", "-W", "ignore", "missing.py"], "missing.py"),
    (["python", "sub"], "sub"),
])
def test_a_missing_script_is_a_usage_error(tmp_path, command, script):
    (tmp_path / "sub").mkdir()
    with pytest.raises(UsageError, match=rf"^--verify: script not found: {script} \(relative to "):
        check_script(tmp_path, command)


def test_what_is_not_checked_here(tmp_path):
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "sub").mkdir()
    for command in (["python", "train.py"], ["python", "-m", "nosuch"], ["bash", "run.sh"], ["train.ipynb"],
                    ["python", "-c", "print(1)"]):
        check_script(tmp_path, command)  # a script that is there, or not a script run by python
    with pytest.raises(UsageError, match=r"^--verify: script not found: train.py \(relative to .*sub\)$"):
        check_script(tmp_path / "sub", ["python", "train.py"])


def test_the_cli_exits_2_before_any_run(tmp_path, capsys):
    (tmp_path / "train.py").write_text("import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    assert main(["migrate", str(tmp_path), "--no-cache", "-q", "--verify", "--", "python", "missing.py"]) == 2
    err = capsys.readouterr().err
    assert "--verify: script not found: missing.py (relative to " in err
    assert "verify: the original on the CPU" not in err


@pytest.mark.parametrize(("torch", "message"), [
    ("2.2,foo", "--torch release 'foo': not a version: 'foo'"),
    ("2.1", "--torch release '2.1': no MPS support table for torch 2.1"),
    ("2.3,,2.13", "--torch '2.3,,2.13': an empty release in the list"),
])
def test_a_bad_release_is_a_usage_error_before_any_run(tmp_path, capsys, torch, message):
    # it ran the CPU runs and every good release, then listed the bad one as "no run document", exit 1
    (tmp_path / "train.py").write_text("import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    assert main(["migrate", str(tmp_path), "--no-cache", "-q", "--verify", "--torch", torch, "--", "python",
                 "train.py"]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert "verify: the original on the CPU" not in err


def test_torch_all_is_every_shipped_minor_as_for_run(tmp_path, monkeypatch):
    # 'all' reached mpsready run as a release named "all" (no run document, verified: no)
    import mpsready.migrate.verify as verify
    from mpsready.run import matrix

    seen = {}

    def fake(plan, command, *, releases, **kw):
        seen["releases"] = releases
        raise SystemExit(0)

    monkeypatch.setattr(verify, "verify_plan", fake)
    (tmp_path / "train.py").write_text("import torch\n")
    with pytest.raises(SystemExit):
        main(["migrate", str(tmp_path), "--no-cache", "-q", "--verify", "--torch", "all", "--", "python", "train.py"])
    assert seen["releases"] == [req for req, _ in matrix.parse_releases("all")]
    assert seen["releases"][0] == "2.2.2" and len(seen["releases"]) == 13

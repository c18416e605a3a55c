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

"""Where migrate's options end and the --verify command starts (builder h40b, 2026-12-07): with the options before
PATH (``migrate --verify PATH -- python train.py``) argparse drops the ``--`` and the command lost its first word,
``python``: the runs got ``train.py ...`` and migrate stopped with "cannot make the temporary copies"."""
from __future__ import annotations

import pytest

from mpsready.cli import main
from mpsready.migrate.cli import split_remainder


@pytest.mark.parametrize(("remainder", "head", "command"), [
    (["python", "train.py"], [], ["python", "train.py"]),
    (["python", "train.py", "--", "--lr", "1"], [], ["python", "train.py", "--", "--lr", "1"]),
    (["--verify", "--", "python", "train.py"], ["--verify"], ["python", "train.py"]),
    (["--verify", "--torch", "2.3", "--", "python", "t.py", "--", "x"], ["--verify", "--torch", "2.3"],
     ["python", "t.py", "--", "x"]),
    (["--apply"], ["--apply"], []),
    ([], [], []),
])
def test_split_remainder(remainder, head, command):
    assert split_remainder(remainder) == (head, command)


@pytest.mark.parametrize("argv", [
    ["migrate", "--verify", "PROJ", "--", "python", "train.py", "--epochs", "1"],
    ["migrate", "PROJ", "--verify", "--", "python", "train.py", "--epochs", "1"],
    ["migrate", "--verify", "--no-cache", "PROJ", "--", "python", "train.py", "--epochs", "1"],
])
def test_the_command_reaches_verify_whole_wherever_the_options_are(tmp_path, monkeypatch, argv):
    import mpsready.migrate.verify as verify

    seen = []

    def fake_verify_plan(plan, command, **kw):
        seen.append(command)
        raise SystemExit(0)  # stop before anything runs

    monkeypatch.setattr(verify, "verify_plan", fake_verify_plan)
    (tmp_path / "train.py").write_text("import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    with pytest.raises(SystemExit):
        main(["-q"] + [a.replace("PROJ", str(tmp_path)) for a in argv])
    assert seen == [["python", "train.py", "--epochs", "1"]]


def test_a_command_without_verify_is_named_whole(tmp_path, capsys):
    (tmp_path / "train.py").write_text("import torch\n")
    assert main(["migrate", str(tmp_path), "--no-cache", "--", "python", "train.py"]) == 2
    assert capsys.readouterr().err == ("mpsready migrate: error: unexpected arguments 'python train.py' (a command "
                                       "goes with --verify)\n")


def test_a_script_alone_runs_with_python_as_mpsready_run_runs_it():
    from mpsready.migrate.verify_notebook import as_python

    # h40b: `--verify -- train.py` started train.py as a program and ended "cannot make the temporary copies"
    assert as_python(["train.py", "--lr", "1"]) == ["python", "train.py", "--lr", "1"]
    assert as_python(["./sub/train.py"]) == ["python", "./sub/train.py"]
    assert as_python(["python", "train.py"]) == ["python", "train.py"]
    assert as_python(["bash", "run.sh"]) == ["bash", "run.sh"]
    assert as_python(["nb.ipynb"]) == ["nb.ipynb"]


@pytest.mark.parametrize(("command", "message"), [
    (["./run.sh"], "--verify: cannot run ./run.sh: not an executable file (relative to PROJ)"),
    (["./missing.sh"], "--verify: cannot run ./missing.sh: not an executable file (relative to PROJ)"),
    (["no-such-program-h40b", "x"], "--verify: cannot run no-such-program-h40b: no such program on PATH"),
])
def test_a_program_that_cannot_start_is_a_usage_error_before_any_run(tmp_path, capsys, command, message):
    (tmp_path / "train.py").write_text("import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    (tmp_path / "run.sh").write_text("python train.py\n")  # not executable
    assert main(["migrate", str(tmp_path), "--no-cache", "--verify", "--", *command]) == 2
    err = capsys.readouterr().err
    assert f"mpsready migrate: error: {message.replace('PROJ', str(tmp_path))}\n" in err, err
    assert "verify: the original on the CPU" not in err and "temporary copies" not in err


@pytest.mark.parametrize("value", ["nan", "inf", "1e20", "0", "-1"])
def test_verify_time_limit_must_be_finite_positive_and_at_most_a_year(tmp_path, capsys, value):
    # h40b: nan ran every run and ended "verified: no"; inf ran without a limit
    (tmp_path / "train.py").write_text("import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    assert main(["migrate", str(tmp_path), "--no-cache", "--verify", "--time-limit", value, "--", "python",
                 "train.py"]) == 2
    assert capsys.readouterr().err == ("mpsready migrate: error: --max-steps must be 0 or more and --time-limit "
                                       "positive, at most 31,536,000 s (a year)\n")


@pytest.mark.parametrize("after", [["--verify", "python", "train.py"], ["--verify", "--max-steps", "1", "python",
                                                                          "train.py"]])
def test_a_verify_command_without_the_double_dash_is_refused_naming_it(tmp_path, capsys, after):
    # h40c: the words landed as PATH ('python') and the rest: exit 2 'needs the command', which the user had given
    (tmp_path / "train.py").write_text("import torch\n")
    assert main(["migrate", str(tmp_path), "--no-cache", *after]) == 2
    assert capsys.readouterr().err == ("mpsready migrate: error: unexpected arguments 'python train.py': the command "
                                       "goes after --, as in mpsready migrate PATH --verify -- python train.py ARGS\n")


@pytest.mark.parametrize(("options", "named"), [
    (["--max-steps", "5"], "--max-steps only applies"),
    (["--torch", "2.5", "--time-limit", "9", "--cwd", "."], "--torch, --time-limit, --cwd only apply"),
])
def test_verify_options_without_verify_are_usage_errors(tmp_path, capsys, options, named):
    # h40c: --max-steps without --verify was accepted and did nothing
    (tmp_path / "train.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    assert main(["migrate", str(tmp_path), "--no-cache", *options]) == 2
    assert capsys.readouterr().err == f"mpsready migrate: error: {named} with --verify\n"
    assert main(["migrate", *options, str(tmp_path), "--no-cache"]) == 2  # before PATH too
    assert capsys.readouterr().err == f"mpsready migrate: error: {named} with --verify\n"

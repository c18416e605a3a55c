"""Exit code 3: an unexpected exception in any command is an internal error, decided once in cli.py."""

import subprocess
import sys

import pytest

from mpsready import rules
from mpsready.cli import main
from mpsready.errors import ExitCode
from mpsready.scan import engine

HINT = "(a bug in mpsready; rerun with -v or MPSREADY_DEBUG=1 for the traceback)"


def _boom(*_a, **_k):
    raise KeyError("no such\nthing")


@pytest.fixture
def broken_scan(monkeypatch):
    monkeypatch.setattr(engine, "scan_path", _boom)
    monkeypatch.delenv("MPSREADY_DEBUG", raising=False)


def test_internal_error_is_exit_3_with_one_line(capsys, broken_scan, tmp_path):
    assert ExitCode.INTERNAL == 3
    assert main(["scan", str(tmp_path)]) == 3
    err = capsys.readouterr().err
    assert err == f"mpsready scan: internal error: KeyError: 'no such\\nthing' {HINT}\n"


def test_verbose_or_env_prints_the_traceback(capsys, broken_scan, tmp_path, monkeypatch):
    assert main(["scan", str(tmp_path), "-v"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "in _boom" in err
    assert err.endswith(f"mpsready scan: internal error: KeyError: 'no such\\nthing' {HINT}\n")
    assert main(["-v", "scan", str(tmp_path)]) == 3  # the global flag before the subcommand
    assert capsys.readouterr().err.startswith("Traceback")
    monkeypatch.setenv("MPSREADY_DEBUG", "1")
    assert main(["scan", str(tmp_path)]) == 3
    assert capsys.readouterr().err.startswith("Traceback")


def test_every_command_shares_it(capsys, monkeypatch):
    monkeypatch.delenv("MPSREADY_DEBUG", raising=False)
    monkeypatch.setattr(rules, "all_rules", lambda: 1 / 0)
    assert main(["rules"]) == 3
    assert capsys.readouterr().err == f"mpsready rules: internal error: ZeroDivisionError: division by zero {HINT}\n"


def test_usage_errors_stay_2_and_findings_stay_1(capsys, tmp_path):
    assert main(["scan", str(tmp_path / "nope")]) == 2
    (tmp_path / "t.py").write_text("import torch\ntorch.ones(1).cuda()\n")
    assert main(["scan", str(tmp_path), "--no-cache", "-q"]) == 1


def test_exit_3_from_a_real_process(tmp_path):
    code = ("import sys; from mpsready import cli; from mpsready.scan import engine\n"
            "def boom(*a, **k): raise RuntimeError('disk on fire')\n"
            "engine.scan_path = boom\nsys.exit(cli.main(['scan', sys.argv[1]]))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 3
    assert proc.stderr == f"mpsready scan: internal error: RuntimeError: disk on fire {HINT}\n"


def test_global_flags_before_or_after_any_command_and_no_clash(capsys):
    import argparse

    from mpsready.cli import _add_global_flags, build_parser

    parser = build_parser()
    assert parser.parse_args(["-q", "rules"]).quiet is True
    assert parser.parse_args(["rules", "-v"]).verbose is True
    assert parser.parse_args(["rules"]).verbose is False
    own = argparse.ArgumentParser()
    own.add_argument("-v", "--version-of", dest="mine")  # a subcommand with its own -v keeps it
    _add_global_flags(own, argparse.SUPPRESS)
    assert vars(own.parse_args(["-v", "x", "-q"])) == {"mine": "x", "quiet": True}

"""Top-level CLI and ``mpsready rules`` on bad input."""

import json
import os
import sys

from mpsready.cli import main


def test_rules_unknown_code_is_a_usage_error(capsys):
    assert main(["rules", "XYZ999", "API"]) == 2  # used to print an empty table and exit 0
    assert capsys.readouterr().err == "mpsready rules: error: no rule matches 'XYZ999' (see `mpsready rules` for the codes)\n"


def test_rules_codes_are_case_insensitive(capsys):
    assert main(["rules", "api101", "--format", "json"]) == 0
    assert [r["code"] for r in json.loads(capsys.readouterr().out)] == ["API101"]


class ClosedPipe:
    """stdout whose reader went away (`mpsready rules --format json | head -1`)."""

    def __init__(self, fd):
        self.fd = fd

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        pass

    def fileno(self):
        return self.fd


def test_closed_pipe_is_not_a_traceback(monkeypatch, capsys):
    r, w = os.pipe()
    try:
        monkeypatch.setattr(sys, "stdout", ClosedPipe(w))
        assert main(["rules", "--format", "json"]) == 141  # used to end in a BrokenPipeError traceback
        assert capsys.readouterr().err == ""
    finally:
        os.close(r)
        os.close(w)

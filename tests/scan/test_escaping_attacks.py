"""One escaping function per format, total on any file name (issue 34 item 7): a non-UTF-8 file name crashed
``scan --format sarif`` (exit 3) and went into JSON as lone surrogates; bidi and zero-width characters passed
through every text output; a code span holding two backticks could be broken out of."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mpsready.escape import json_text, md_code, visible

ROOT = Path(__file__).resolve().parents[2]
CUDA = b"import torch\nx = torch.ones(1).cuda()\n"


@pytest.mark.parametrize("raw, shown", [
    ("ev\u202eil.py", "ev\\u202eil.py"),  # right-to-left override (Trojan Source)
    ("a\u2066b\u2069c", "a\\u2066b\\u2069c"),  # isolates
    ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff"),
    ("line\u2028sep", "line\\u2028sep"),
    ("bell\x07esc\x1b[2J", "bell\\x07esc\\x1b[2J"),
    ("bad\udcff\udcfe.py", "bad\\xff\\xfe.py"),  # bytes of a non-UTF-8 name (surrogateescape)
    ("ünï cødé.py", "ünï cødé.py"),  # printable text stays as it is
])
def test_visible_escapes_every_hidden_character(raw, shown):
    assert visible(raw) == shown


@pytest.mark.parametrize("raw, span", [
    ("plain", "`plain`"),
    ("a`b", "``a`b``"),
    ("a``b", "```a``b```"),
    ("x```y`", "```` x```y` ````"),
    ("`lead", "`` `lead ``"),
    ("p|q", "`p\\|q`"),
])
def test_code_spans_survive_any_run_of_backticks(raw, span):
    assert md_code(raw) == span


def test_json_text_keeps_text_and_writes_the_bytes_of_a_non_utf8_name():
    assert json_text("ok \u202e\x07") == "ok \u202e\x07"  # JSON's encoder escapes these itself
    assert json_text("bad\udcff.py") == "bad\\xff.py"


@pytest.fixture
def odd_names(tmp_path):
    root = tmp_path / "p"
    root.mkdir()
    with open(os.path.join(os.fsencode(root), b"bad\xff\xfe.py"), "wb") as fh:
        fh.write(CUDA)
    (root / "ev\u202eil.py").write_bytes(CUDA)
    return root


def _scan(root, fmt):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "mpsready", "scan", str(root), "--no-cache", "--format", fmt],
                          capture_output=True, env=env, timeout=120)


def test_sarif_of_a_non_utf8_file_name_is_valid_utf8_with_percent_encoded_uris(odd_names):
    proc = _scan(odd_names, "sarif")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout.decode("utf-8"))
    uris = sorted({r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                   for r in doc["runs"][0]["results"] if r["ruleId"] == "API101"})
    assert uris == ["bad%FF%FE.py", "ev%E2%80%AEil.py"]


def test_json_of_a_non_utf8_file_name_is_valid_utf8(odd_names):
    proc = _scan(odd_names, "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout.decode("utf-8"))
    paths = sorted({f["location"]["path"] for f in doc["findings"] if f["code"] == "API101"})
    assert paths == ["bad\\xff\\xfe.py", "ev\u202eil.py"]


@pytest.mark.parametrize("fmt", ["terminal", "md", "github"])
def test_text_formats_show_no_raw_bidi_or_undecodable_byte(odd_names, fmt):
    proc = _scan(odd_names, fmt)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "\u202e".encode() not in out and b"\xff" not in out
    assert b"ev\\u202eil.py" in out and b"bad\\xff\\xfe.py" in out


def test_migrate_summary_escapes_control_characters_in_file_names(tmp_path, capsys):
    from mpsready.cli import main

    (tmp_path / "e\x1b[2Jvil\u202e.py").write_bytes(CUDA)
    assert main(["migrate", str(tmp_path), "--apply", "--no-cache"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == "written: 1 file: e\\x1b[2Jvil\\u202e.py"

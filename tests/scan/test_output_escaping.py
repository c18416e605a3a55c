"""Issue 22: every renderer escapes what comes from the project. Control characters (ESC clears the screen or
sets the terminal title, BEL rings) are shown as ``\\xNN`` in terminal, Markdown, ``github`` and report
outputs; ``<script>`` / ``<img onerror>`` become entities in Markdown (pandoc, mkdocs and wikis render raw
HTML)."""

from __future__ import annotations

import json

import pytest

from mpsready.cli import main

ESC_NAME = "a\x1b[2J\x1b]0;pwned\x07.py"  # clear screen, set the terminal title, ring
SHOWN_NAME = "a\\x1b[2J\\x1b]0;pwned\\x07.py"
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
EXT = "ext\x1b[2J\x07<script>"  # a crafted extension name: reaches the checklist and the verdict's reasons
FILES = {ESC_NAME: "import torch\nx = torch.ones(1).cuda()\n", "requirements.txt": f"{SCRIPT}\n{IMG}\n",
         "ext.py": f"from torch.utils.cpp_extension import load\nm = load(name={EXT!r}, sources=['k.cu'])\n".replace(
             "\\x1b", "\x1b").replace("\\x07", "\x07"),
         "k.cu": "__global__ void k() {}\n"}


def raw_bytes(text: str) -> list[str]:
    return [ch for ch in text if ch in "\x1b\x07"]


@pytest.fixture
def project(write_project):
    return write_project(FILES)


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_safe_helpers_exact():
    from mpsready.escape import md_cell, md_code, md_text, visible

    assert visible("a\x1b[2J\x07\n\x7f\x85b") == "a\\x1b[2J\\x07\\x0a\\x7f\\x85b"
    assert md_text(f"x {SCRIPT}") == "x &lt;script&gt;alert(1)&lt;/script&gt;"
    assert md_cell(f"{IMG}|\x07") == "&lt;img src=x onerror=alert(1)&gt;\\|\\x07"
    assert md_code("<b>|`") == "`` <b>\\|` ``"


def test_scan_terminal(project, capsys):
    code, out = run_cli(capsys, "scan", str(project), "--no-cache")
    assert code == 1
    assert raw_bytes(out) == []
    assert SHOWN_NAME in out.replace("\n", "")


def test_scan_markdown(project, capsys):
    code, out = run_cli(capsys, "scan", str(project), "--format", "md", "--no-cache")
    assert code == 1
    assert raw_bytes(out) == []
    assert "<script" not in out and "<img" not in out
    assert "malformed requirement '&lt;script&gt;alert(1)&lt;/script&gt;'" in out
    assert "malformed requirement '&lt;img src=x onerror=alert(1)&gt;'" in out
    assert f"`{SHOWN_NAME}:2:" in out  # a code span: shown, never interpreted


def test_scan_github(project, capsys):
    code, out = run_cli(capsys, "scan", str(project), "--format", "github", "--no-cache")
    assert code == 1
    assert raw_bytes(out) == []
    line = next(x for x in out.splitlines() if x.startswith("::error") and "API101" in x)
    assert line.startswith(f"::error file={SHOWN_NAME},line=2,")


@pytest.fixture
def scan_json(project, tmp_path, capsys):
    assert main(["scan", str(project), "--format", "json", "--no-cache"]) == 1
    path = tmp_path / "scan.json"
    doc = json.loads(capsys.readouterr().out)
    assert ESC_NAME in [f["location"]["path"] for f in doc["findings"]]  # JSON keeps the exact text
    path.write_text(json.dumps(doc))
    return path


def test_report_terminal(scan_json, capsys):
    code, out = run_cli(capsys, "report", "--scan", str(scan_json), "--format", "terminal")
    assert code == 1
    assert raw_bytes(out) == []
    assert "a portable replacement for ext\\x1b[2J\\x07<script> (none is known)" in out


def test_report_markdown(scan_json, tmp_path, capsys):
    code, _out = run_cli(capsys, "report", "--scan", str(scan_json), "--format", "md", "--out", str(tmp_path / "rep"))
    assert code == 1
    md = (tmp_path / "rep" / "report.md").read_text()
    assert raw_bytes(md) == []
    assert "<script" not in md and "<img" not in md
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert ("| 2 | CUDA-only components have alternatives (critical) | **FAIL (predicted)** | predicted | 2 CUDA-only "
            "component(s) without a known alternative: ext\\x1b[2J\\x07&lt;script&gt;, k.cu") in md
    assert "- a portable replacement for ext\\x1b[2J\\x07&lt;script&gt; (none is known)" in md


def test_run_terminal_shows_an_exception_text_escaped():
    from mpsready.run.render import render_terminal

    doc = {"target": {"torch": "2.5", "macos": "15.5", "fallback": False, "mps_available": True},
           "outcome": "inconclusive", "steps": 0, "seconds": 0.1, "failures": [], "fallbacks": [], "predictions": [],
           "limits": ["x"], "mps_used": False,
           "program_error": {"kind": "program_error", "exception": "ValueError", "message": "bad \x1b[2J\x07 value",
                             "location": {"path": ESC_NAME, "line": 3, "function": "f"}, "missing": None}}
    out = render_terminal(doc)
    assert raw_bytes(out) == []
    assert "  ValueError: bad \\x1b[2J\\x07 value\n" in out
    assert f"{SHOWN_NAME}:3" in out


def test_trace_cells_escape_program_text():
    from mpsready.trace.render import _md, _t

    assert _t("boom \x1b[2J [bold]x[/bold]\x07") == "boom \\x1b[2J \\[bold]x\\[/bold]\\x07"
    assert _md(f"a|b\n{SCRIPT}\x07") == "a\\|b &lt;script&gt;alert(1)&lt;/script&gt;\\x07"

"""README "Try it": what a newcomer types after ``bash scripts/demo.sh`` works as written (newcomer pass of
2026-12-07: the README never said that ``mpsready`` lives in ``.venv``, so the next command was "command not
found"; its examples named no project to try them on)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from mpsready.cli import build_parser
from mpsready.commands.demo import DEFAULT_OUT

REPO = Path(__file__).resolve().parents[2]


def _try_it() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return text[text.index("## Try it"):text.index("\n## ", text.index("## Try it") + 1)]


def _commands(section: str) -> list[str]:
    return [line.strip() for line in section.splitlines() if line.startswith("    ") and line.strip()]


def test_the_section_activates_the_venv_demo_sh_installs_mpsready_into():
    commands = _commands(_try_it())
    assert commands[:2] == ["bash scripts/demo.sh", "source .venv/bin/activate"]
    demo = (REPO / "scripts" / "demo.sh").read_text(encoding="utf-8")
    assert "-m venv .venv" in demo and ".venv/bin/python -m pip install" in demo and "-e '.[dev]'" in demo
    assert "exec .venv/bin/mpsready demo" in demo


def test_each_mpsready_command_of_the_section_parses_and_names_the_demos_files():
    commands = [c for c in _commands(_try_it()) if c.startswith("mpsready ")]
    assert [c.split()[1] for c in commands] == ["scan", "run", "ops"]
    parser = build_parser()
    for command in commands:
        parser.parse_args(shlex.split(command)[1:])  # argparse exits (SystemExit) on an unknown option
    demo_files = {m.group(0) for c in commands for m in re.finditer(r"mpsready-demo/\S+", c)}
    assert demo_files == {f"{DEFAULT_OUT}/demo_project", f"{DEFAULT_OUT}/demo_project/train.py"}
    shipped = REPO / "src" / "mpsready" / "examples"
    for path in demo_files:  # what `mpsready demo` copies into mpsready-demo/ (mpsready.check.demo.prepare)
        assert (shipped / path.split("/", 1)[1]).exists(), path

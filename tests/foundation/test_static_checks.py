"""Lint and type check as part of the test suite, so the README's test command (and CI) enforces both.

ruff: the checks in ``[tool.ruff]`` must pass. mypy: the configuration in ``[tool.mypy]``; each unit's error
count may not exceed its ceiling in ``mypy_baseline.toml`` and must be lowered there when it falls (the
ceilings only shrink); the strict units must stay at zero.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
BASELINE = Path(__file__).with_name("mypy_baseline.toml")
ERROR = re.compile(r"^src/mpsready/(?P<path>[^:]+\.py):\d+: error: ")


def _tool(name: str) -> list[str]:
    exe = Path(sys.executable).with_name(name)
    if exe.exists():
        return [str(exe)]
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: it is in the dev extra (pip install -e '.[dev]')")
    return [found]


def unit_of(path: str) -> str:
    """``scan/code/analyzer.py`` -> ``scan``; ``findings.py`` -> ``findings``."""
    first = path.split("/", 1)[0]
    return first[:-3] if first.endswith(".py") else first


def count_errors(output: str) -> Counter[str]:
    return Counter(unit_of(m["path"]) for line in output.splitlines() if (m := ERROR.match(line)))


def test_unit_of_and_count():
    out = ("src/mpsready/scan/code/analyzer.py:3: error: Bad  [misc]\n"
           "src/mpsready/findings.py:9: error: Worse  [arg-type]\n"
           "src/mpsready/scan/engine.py:5: note: context\n"
           "Found 2 errors in 2 files (checked 3 source files)\n")
    assert count_errors(out) == Counter({"scan": 1, "findings": 1})


def test_ruff_passes():
    proc = subprocess.run([*_tool("ruff"), "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_within_the_baseline():
    baseline = tomllib.loads(BASELINE.read_text(encoding="utf-8"))
    ceilings: dict[str, int] = baseline["ceilings"]
    strict: list[str] = baseline["strict"]
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(ROOT / ".mypy_cache")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # 2: mypy itself failed (bad config)
    counts = count_errors(proc.stdout)
    listing = "\n".join(line for line in proc.stdout.splitlines() if ERROR.match(line))
    over = {u: n for u, n in counts.items() if n > ceilings.get(u, 0)}
    assert over == {}, f"more mypy errors than tests/foundation/mypy_baseline.toml allows:\n{listing}"
    assert {u: counts[u] for u in strict if counts[u]} == {}, f"a strict unit has mypy errors:\n{listing}"
    fallen = {u: counts[u] for u, n in ceilings.items() if counts[u] < n}
    assert fallen == {}, f"errors fell: lower these ceilings in tests/foundation/mypy_baseline.toml to {fallen}"

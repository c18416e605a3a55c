"""The held-out report set (tests/run/data/fresh_reports) is well formed: only the data, no emulator runs.

The outcome tests (each report ends as the Mac did) come once the emulator models these causes; until then
``benchmarks/fresh_reports.py`` scores them.
"""
from __future__ import annotations

import ast
import hashlib
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

DATA = Path(__file__).resolve().parent / "data" / "fresh_reports"
ROOT = Path(__file__).resolve().parents[2]
# ../shared beside the checkout (a worktree sits one level deeper, so the nearest ancestor's shared/ is taken)
SHARED_CASES = next((d / "shared" / "cases" / "mps_cases.json" for d in ROOT.parents
                     if (d / "shared" / "cases" / "mps_cases.json").is_file()), ROOT.parent / "shared" / "cases"
                    / "mps_cases.json")
IN_REPO_CASES = ROOT / "tests" / "trace" / "data" / "mps_cases.json"  # the copy the emulated-case tests read
CAUSES = {"placement", "kernel_dtype", "size_limit", "release_python", "compile", "platform", "spawn",
          "missing_op", "wrong_result", "works"}
REPORTS = yaml.safe_load((DATA / "reports.yaml").read_text(encoding="utf-8"))["reports"]
IDS = [r["id"] for r in REPORTS]
KEYS = {"id", "url", "cause", "torch", "macos", "expected", "fixed_in", "half", "note", "after_fix"}


def _release(text: str) -> tuple[int, int]:
    major, minor = str(text).split(".")
    return int(major), int(minor)


def test_the_set_covers_every_cause_with_at_least_24_reports():
    assert len(REPORTS) >= 24
    assert {r["cause"] for r in REPORTS} == CAUSES


def test_ids_are_unique_and_name_their_scripts():
    assert len(IDS) == len(set(IDS))
    on_disk = {p.stem for p in DATA.glob("*.py")}
    assert on_disk == set(IDS)


@pytest.mark.parametrize("rid", IDS)
def test_entry_is_well_formed(rid):
    r = next(r for r in REPORTS if r["id"] == rid)
    assert set(r) <= KEYS and {"id", "url", "cause", "torch", "macos", "expected", "fixed_in", "half"} <= set(r)
    assert r["cause"] in CAUSES
    assert r["url"].startswith("https://github.com/")
    assert (2, 3) <= _release(r["torch"]) <= (2, 14)
    assert re.fullmatch(r"1[45]\.\d+", str(r["macos"])), r["macos"]
    _check_expectation(r["expected"])
    if r["cause"] == "wrong_result":
        assert r["expected"] == {"outcome": "completed", "wrong_result": True}
    if r["cause"] in ("platform", "works"):
        assert r["expected"] == {"outcome": "completed"}
    if r["fixed_in"] is None:
        assert "after_fix" not in r
    else:
        assert r["after_fix"]["torch"] == r["fixed_in"]
        assert _release(r["torch"]) < _release(r["fixed_in"]) <= (2, 14)
        _check_expectation({k: v for k, v in r["after_fix"].items() if k != "torch"})


def _check_expectation(want: dict) -> None:
    if want["outcome"] == "failed":
        assert set(want) == {"outcome", "exception", "message_contains", "line"}
        assert re.fullmatch(r"[A-Z][A-Za-z]*(Error|Exception|Failed)", want["exception"])
        assert isinstance(want["message_contains"], str) and len(want["message_contains"]) >= 10
        assert isinstance(want["line"], int) and want["line"] > 0
    else:
        assert want["outcome"] == "completed"
        assert set(want) <= {"outcome", "wrong_result"}


@pytest.mark.parametrize("rid", IDS)
def test_script_parses_hard_codes_mps_and_raises_on_a_statement_line(rid):
    r = next(r for r in REPORTS if r["id"] == rid)
    source = (DATA / f"{rid}.py").read_text(encoding="utf-8")
    tree = ast.parse(source, filename=f"{rid}.py")
    assigns = [n for n in tree.body if isinstance(n, ast.Assign)
               and [t.id for t in n.targets if isinstance(t, ast.Name)] == ["dev"]]
    assert [ast.literal_eval(a.value) for a in assigns] == ["mps"]
    lines = {n.lineno for n in ast.walk(tree) if isinstance(n, ast.stmt)}
    for want in (r["expected"], r.get("after_fix") or {}):
        if want.get("outcome") == "failed":
            assert want["line"] in lines, (rid, want["line"])


def test_halves_follow_the_sha1_rule_so_each_cause_is_in_both():
    by_cause = defaultdict(list)
    for r in REPORTS:
        by_cause[r["cause"]].append(r)
    for cause, rs in by_cause.items():
        ordered = sorted(rs, key=lambda r: hashlib.sha1(r["id"].encode("utf-8")).hexdigest())
        assert [r["half"] for r in ordered] == ["tune" if i % 2 == 0 else "held_out" for i in range(len(rs))], cause
        if len(rs) >= 2:
            assert {r["half"] for r in rs} == {"tune", "held_out"}


def _sources(path: Path) -> set[str]:
    return {c["source"].rstrip("/") for c in json.loads(path.read_text(encoding="utf-8"))}


def test_no_report_is_one_of_the_shared_cases():
    if not SHARED_CASES.is_file():
        pytest.skip(f"shared cases not present at {SHARED_CASES} (a checkout without ../shared)")
    used = _sources(SHARED_CASES)
    assert len(used) == 30
    assert not {r["url"].rstrip("/") for r in REPORTS} & used


def test_no_report_is_one_of_the_cases_copied_into_the_tests():
    used = _sources(IN_REPO_CASES)
    assert "https://github.com/pytorch/pytorch/issues/141711" in used
    assert not {r["url"].rstrip("/") for r in REPORTS} & used

"""Score the emulated Mac against held-out public MPS reports: does ``mpsready run`` end each as the Mac did?

The reports and their re-creations live in ``tests/run/data/fresh_reports/`` (``reports.yaml`` says, for each,
the public report, its cause, the torch release and macOS reported, optionally ``mac: intel`` for a report from
an Intel Mac (run with ``--mac intel``), and what the Mac did; ``<id>.py`` is our own minimal script). Every
report runs through the CLI as a user would run it::

    mpsready run --torch T --macos M --format json -o FILE -- python SCRIPT

at the reported release, and again at ``after_fix.torch`` when the report names a fix. Each run document is then
compared with the expectation: the outcome; for a failure the exception class, a substring of the message and
the script's line (of ``first_failure``, which must be a predicted Mac failure); for a known wrong result the
run document's ``wrong_results`` list. A report scores when all its checks hold.

    PYTHONPATH=src python benchmarks/fresh_reports.py [--half tune|held_out|all] [--json FILE] [--jobs 2]

Prints one row per check, the score per half and per cause (``N/M`` reports), and every miss with its cause.
Every outcome compared here is a prediction of the emulator against what a public report says; nothing is
observed on a Mac. Exit status 0 whatever the score (2 on a usage or data error).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "run" / "data" / "fresh_reports"
CAUSES = ("placement", "kernel_dtype", "size_limit", "release_python", "compile", "platform", "spawn",
          "missing_op", "wrong_result", "works", "dtype", "availability", "generator")
HALVES = ("tune", "held_out")


@dataclass(frozen=True)
class Check:
    """One run to make and the expectation its document must meet."""

    report: str
    cause: str
    half: str
    stage: str  # "reported" (the report's release) or "after_fix"
    torch: str
    macos: str
    script: Path
    expected: dict[str, Any]
    mac: str = "apple"  # the report's machine: "intel" for an Intel Mac (run with --mac intel)


@dataclass
class Result:
    check: Check
    misses: list[str] = field(default_factory=list)
    got: str = ""
    seconds: float = 0.0  # wall time of the mpsready run command here
    program_seconds: float | None = None  # the run document's ``seconds`` (the program itself)

    @property
    def ok(self) -> bool:
        return not self.misses


def load_reports(path: Path = DATA / "reports.yaml") -> list[dict[str, Any]]:
    """The ``reports`` list of ``reports.yaml``; raises ``ValueError`` on a malformed file."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or not isinstance(doc.get("reports"), list):
        raise ValueError(f"{path}: expected a mapping with a 'reports' list")  # noqa: TRY004 (bad data, not type)
    return doc["reports"]


def checks_of(report: dict[str, Any], data_dir: Path = DATA) -> list[Check]:
    """The reported-release check, and the after-fix check when the report names one."""
    script = data_dir / f"{report['id']}.py"
    mac = str(report.get("mac") or "apple")
    out = [Check(report["id"], report["cause"], report["half"], "reported", str(report["torch"]),
                 str(report["macos"]), script, dict(report["expected"]), mac)]
    fix = report.get("after_fix")
    if fix:
        fix = dict(fix)
        torch = str(fix.pop("torch"))
        out.append(Check(report["id"], report["cause"], report["half"], "after_fix", torch, str(report["macos"]),
                         script, fix, mac))
    return out


def compare(check: Check, doc: dict[str, Any]) -> tuple[list[str], str]:
    """``(misses, summary)`` of a run document against the check's expectation (misses empty: it holds)."""
    want = check.expected
    outcome = doc.get("outcome")
    ff = doc.get("first_failure") or {}
    mac = bool(ff.get("mac", outcome == "failed"))
    wrong = doc.get("wrong_results")
    summary = outcome or "?"
    if ff:
        loc = ff.get("location") or {}
        summary += f" {ff.get('exception')}@{loc.get('line')}" + ("" if mac else " (program's own error)")
    if wrong:
        summary += f" wrong_results={len(wrong)}"
    misses: list[str] = []
    if want["outcome"] == "failed":
        if outcome == "completed":
            return ["completed where the Mac failed"], summary
        if outcome == "inconclusive" or (ff and not mac):
            why = f"the program's own {ff.get('exception')}: {_short(ff.get('message'))}"
            return [f"inconclusive where the Mac failed ({why})"], summary
        if outcome != "failed":
            return [f"{outcome} where the Mac failed"], summary
        got_cls = str(ff.get("exception") or "").rsplit(".", 1)[-1]
        if got_cls != want["exception"]:
            misses.append(f"wrong exception ({got_cls}, the Mac raised {want['exception']})")
        if want["message_contains"] not in str(ff.get("message") or ""):
            misses.append(f"wrong message ({_short(ff.get('message'))!r} lacks {want['message_contains']!r})")
        loc = ff.get("location") or {}
        if loc.get("line") != want["line"] or Path(str(loc.get("path") or "")).name != check.script.name:
            misses.append(f"wrong line ({loc.get('path')}:{loc.get('line')}, the Mac: "
                          f"{check.script.name}:{want['line']})")
        return misses, summary
    # the Mac completed
    if outcome == "failed":
        misses.append(f"failed where the Mac completed ({ff.get('exception')}: {_short(ff.get('message'))})")
    elif outcome == "inconclusive":
        misses.append(f"inconclusive where the Mac completed ({ff.get('exception')}: {_short(ff.get('message'))})")
    elif outcome != "completed":
        misses.append(f"{outcome} where the Mac completed")
    if want.get("wrong_result"):
        if wrong is None:
            misses.append("no predicted wrong result (the run document has no wrong_results list)")
        elif not wrong:
            misses.append("no predicted wrong result")
    elif wrong:
        misses.append(f"a predicted wrong result the report does not give ({len(wrong)})")
    return misses, summary


def _short(text: Any, n: int = 90) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= n else s[: n - 3] + "..."


def run_check(check: Check, cli: list[str], timeout: float) -> Result:
    """Run one check through the CLI in a scratch directory and compare its document."""
    res = Result(check)
    with tempfile.TemporaryDirectory(prefix="fresh_report_") as tmp:
        out = Path(tmp) / "run.json"
        cmd = [*cli, "-q", "run", "--torch", check.torch, "--macos", check.macos,
               *(["--mac", check.mac] if check.mac != "apple" else []), "--format", "json", "-o",
               str(out), "--", "python", str(check.script)]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
        env.pop("PYTORCH_ENABLE_MPS_FALLBACK", None)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, check=False, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            res.seconds = time.perf_counter() - t0
            res.misses, res.got = [f"timed out after {timeout:.0f} s"], "timeout"
            return res
        res.seconds = time.perf_counter() - t0
        if not out.exists():
            tail = _short(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "", 120)
            res.misses, res.got = [f"no run document (exit {proc.returncode}: {tail})"], "no document"
            return res
        doc = json.loads(out.read_text(encoding="utf-8"))
    res.program_seconds = doc.get("seconds")
    res.misses, res.got = compare(check, doc)
    return res


def _want(check: Check) -> str:
    w = check.expected
    if w["outcome"] == "failed":
        return f"failed {w['exception']}@{w['line']}"
    return "completed" + (" + wrong result" if w.get("wrong_result") else "")


def score(results: list[Result]) -> dict[str, Any]:
    """Per report (all its checks hold), per half and per cause: ``{"reports": {...}, "half": {...}, ...}``."""
    by_report: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_report[r.check.report].append(r)
    reports = {rid: all(r.ok for r in rs) for rid, rs in by_report.items()}
    tally: dict[str, dict[str, list[int]]] = {"half": defaultdict(lambda: [0, 0]), "cause": defaultdict(lambda: [0, 0])}
    for rid, rs in by_report.items():
        c = rs[0].check
        for key, val in (("half", c.half), ("cause", c.cause)):
            tally[key][val][0] += int(reports[rid])
            tally[key][val][1] += 1
    checks_ok = sum(r.ok for r in results)
    mac_failed = [r for r in results if r.check.expected.get("outcome") == "failed"]
    # the most harmful miss: a Mac failure the emulated Mac reports as "completed" (unverified is not that)
    false_pass = sum(1 for r in mac_failed if r.got.split(" ", 1)[0] == "completed")
    return {"reports": reports, "total": [sum(reports.values()), len(reports)],
            "checks": [checks_ok, len(results)], "mac_failures_completed": [false_pass, len(mac_failed)],
            "half": {k: tuple(v) for k, v in sorted(tally["half"].items())},
            "cause": {k: tuple(tally["cause"][k]) for k in CAUSES if k in tally["cause"]}}


def render(results: list[Result], sc: dict[str, Any], wall: float) -> str:
    lines = [f"{'report':36} {'cause':14} {'half':8} {'stage':9} {'torch':5} {'expected (Mac)':26} {'got':34} ok"]
    for r in results:
        c = r.check
        lines.append(f"{c.report:36} {c.cause:14} {c.half:8} {c.stage:9} {c.torch:5} {_want(c):26} "
                     f"{_short(r.got, 34):34} {'yes' if r.ok else 'MISS'}")
    lines.append("")
    slowest = max((r.program_seconds or 0.0 for r in results), default=0.0)
    lines.append(f"score: {sc['total'][0]}/{sc['total'][1]} reports, {sc['checks'][0]}/{sc['checks'][1]} checks "
                 f"(wall {wall:.1f} s; slowest program {slowest:.1f} s)")
    lines.append(f"Mac failures reported as completed: {sc['mac_failures_completed'][0]} of "
                 f"{sc['mac_failures_completed'][1]} checks")
    lines.append("per half:  " + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sc["half"].items()))
    lines.append("per cause: " + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sc["cause"].items()))
    misses = [r for r in results if not r.ok]
    if misses:
        lines.append("")
        lines.append("misses:")
        for r in misses:
            for m in r.misses:
                lines.append(f"  {r.check.report} [{r.check.cause}, {r.check.stage} torch {r.check.torch}]: {m}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", choices=(*HALVES, "all"), default="all")
    ap.add_argument("--json", metavar="FILE", help="also write the checks and scores as JSON")
    ap.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per run (default 180)")
    ap.add_argument("--only", metavar="ID", action="append", help="only this report (repeatable)")
    ap.add_argument("--data", metavar="DIR", default=str(DATA),
                    help="folder of reports.yaml and the <id>.py scripts (default: tests/run/data/fresh_reports)")
    ap.add_argument("--cli", default=f"{shlex.quote(sys.executable)} -m mpsready",
                    help="the mpsready command (default: this Python's -m mpsready, with this checkout's src)")
    args = ap.parse_args(argv)
    # absolute: every run happens in a scratch folder, where a relative script path would name nothing
    data = Path(args.data).resolve()
    try:
        reports = load_reports(data / "reports.yaml")
    except (OSError, ValueError, yaml.YAMLError) as exc:
        print(f"fresh_reports: {exc}", file=sys.stderr)
        return 2
    chosen = [r for r in reports if (args.half == "all" or r["half"] == args.half)
              and (not args.only or r["id"] in args.only)]
    checks = [c for r in chosen for c in checks_of(r, data)]
    cli = shlex.split(args.cli)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda c: run_check(c, cli, args.timeout), checks))
    wall = time.perf_counter() - t0
    sc = score(results)
    print(render(results, sc, wall))
    if args.json:
        payload = {"half": args.half, "wall_seconds": round(wall, 1), "score": sc,
                   "checks": [{**{k: v for k, v in asdict(r.check).items() if k != "script"},
                               "script": r.check.script.name, "ok": r.ok, "misses": r.misses, "got": r.got,
                               "seconds": round(r.seconds, 2), "program_seconds": r.program_seconds}
                              for r in results]}
        Path(args.json).write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

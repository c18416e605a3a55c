"""Fuzz every declaration reader through the real scan entry point (issue 22), outside CI.

    nice -n 19 .venv/bin/python scripts/fuzz_scan.py --per-reader 100000 --out fuzz-scan.json [--only requirements]

For each reader of tests/fuzz/targets.py (the scan_targets with a file name), each input is written as that
file into an otherwise empty project and scanned with ``mpsready.scan.scan_path`` (no cache, one job), as
``mpsready scan`` does. Inputs are the seeded mutations of tests/fuzz (``mutate``), and one input in four also
gets a long line: a run of 5,000 to 60,000 digits, blanks, brackets or letters, quoted or bare. An internal
error is any exception out of ``scan_path`` but ``UsageError`` (a bad ``[tool.mpsready]`` setting in a
mutated pyproject.toml: the documented exit 2, counted apart); a slow input is one over ``--slow`` seconds of CPU (2 by default).
Prints and writes per reader: inputs, internal errors, slow inputs, the slowest input's CPU seconds and size.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fuzz.targets import mutate, scan_targets  # noqa: E402

LONG_UNITS = ["1", " ", "[", "x", "a ", "\t", "=", '"', "9_", "-"]


def long_line(rng: random.Random) -> str:
    unit = rng.choice(LONG_UNITS)
    body = unit * (rng.randint(5_000, 60_000) // len(unit))
    if rng.random() < 0.4:
        body = f'"{body}"' if rng.random() < 0.5 else f"'{body}'"
    prefix = rng.choice(["", "pip install ", "x = ", "  - ", "RUN pip install ", "-r ", "name", "[", "!pip install "])
    return prefix + body


def files_of(target_name: str) -> str | None:
    """The file name of a reader target ``"requirements (requirements.txt)"``; None for other targets."""
    if "(" not in target_name or not target_name.endswith(")") or "model.entries" in target_name:
        return None
    name = target_name.rsplit("(", 1)[1][:-1]
    return name if "." in name or name in ("Pipfile", "Dockerfile") else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-reader", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--slow", type=float, default=2.0)
    ap.add_argument("--only", help="comma-separated substrings of reader names")
    ap.add_argument("--out", default="fuzz-scan.json")
    ap.add_argument("--max-seconds", type=float, default=None, help="stop each reader after this many seconds")
    args = ap.parse_args()

    from mpsready.errors import UsageError
    from mpsready.scan import ScanConfig, scan_path

    work = Path(tempfile.mkdtemp(prefix="mpsready-fuzz-scan-"))
    summary = []
    try:
        for target in scan_targets():
            name = files_of(target.name)
            if name is None or (args.only and not any(p and p in target.name for p in args.only.split(","))):
                continue
            rng = random.Random(f"{args.seed}:{target.name}")
            root = work / name.replace(".", "_")
            root.mkdir()
            (root / "base.txt").write_text("numpy\n")
            errors, slow, slowest, t0, n, usage = [], [], (0.0, 0, ""), time.time(), 0, 0
            for n in range(1, args.per_reader + 1):  # noqa: B007  # n is the count reported after the loop
                text = mutate(rng, target)
                if rng.random() < 0.25:
                    lines = text.split("\n")
                    lines.insert(rng.randint(0, len(lines)), long_line(rng))
                    text = "\n".join(lines)
                (root / name).write_bytes(text.encode("utf-8", "surrogatepass"))
                c = time.process_time()
                try:
                    scan_path(root, ScanConfig(cache_dir=None, jobs=1))
                except UsageError:  # documented: a bad [tool.mpsready] setting fails closed (exit 2, one line)
                    usage += 1
                except Exception as exc:  # noqa: BLE001 - any other escape is an internal error
                    errors.append({"input": text[:2000], "bytes": len(text),
                                   "error": f"{type(exc).__name__}: {exc}"[:300],
                                   "where": traceback.format_exc().splitlines()[-3][:300]})
                dc = time.process_time() - c
                if dc > args.slow:
                    slow.append({"input": text[:2000], "bytes": len(text), "cpu_seconds": round(dc, 3)})
                if dc > slowest[0]:
                    slowest = (dc, len(text), text[:2000])
                if args.max_seconds and time.time() - t0 > args.max_seconds:
                    break
            row = {"reader": target.name, "inputs": n, "internal_errors": len(errors), "slow_inputs": len(slow),
                   "usage_errors": usage,
                   "first_errors": errors[:5], "first_slow": slow[:5], "slowest_cpu_seconds": round(slowest[0], 4),
                   "slowest_chars": slowest[1], "slowest_input": slowest[2], "wall_seconds": round(time.time() - t0, 1)}
            summary.append(row)
            print(f"{target.name}: {n} inputs, {len(errors)} internal errors, {usage} usage errors (exit 2, "
                  f"documented), {len(slow)} over {args.slow:g} s, "
                  f"slowest {slowest[0]:.3f} s CPU ({slowest[1]} chars), {row['wall_seconds']} s", flush=True)
            Path(args.out).write_text(json.dumps({"seed": args.seed, "readers": summary}, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    bad = sum(r["internal_errors"] + r["slow_inputs"] for r in summary)
    print(f"total: {sum(r['inputs'] for r in summary)} inputs, "
          f"{sum(r['internal_errors'] for r in summary)} internal errors, "
          f"{sum(r['slow_inputs'] for r in summary)} slow inputs")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The long fuzz run of issue 14, outside CI: N mutated inputs per reader (default 100,000).

    nice -n 19 .venv/bin/python scripts/fuzz_long.py --per-reader 100000 --out fuzz-long.json

Drives the same readers as tests/fuzz (tests/fuzz/targets.py) with inputs from a seeded generator (seeds of each
format, token soup, hostile fragments). A crash is any exception outside the reader's documented input error, or
an input that runs past --timeout seconds (SIGALRM). Memory is capped with RLIMIT_AS (--max-gb) so a blow-up is a
MemoryError crash, not a stalled machine. Prints and writes, per reader: inputs tried, crashes (with the first
few inputs saved), the slowest input by CPU time (seconds, characters, the input itself up to 100,000
characters) and the longest wall time of one input (on a shared machine that includes waiting).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import signal
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.setrecursionlimit(1000)  # the default: the readers must cope with it, not with a raised one

from tests.fuzz.targets import all_targets, mutate  # noqa: E402


class Timeout(Exception):
    pass


def _alarm(_sig, _frame):
    raise Timeout()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-reader", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--max-gb", type=float, default=3.0)
    ap.add_argument("--only", help="comma-separated substrings of reader names to run (to split a run over processes)")
    ap.add_argument("--out", default="fuzz-long.json")
    args = ap.parse_args()
    limit = int(args.max_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGALRM, _alarm)
    summary = []
    started = time.time()
    for target in all_targets():
        if args.only and not any(part and part in target.name for part in args.only.split(",")):
            continue
        rng = random.Random(f"{args.seed}:{target.name}")
        crashes, slowest, t0, max_wall = [], (0.0, 0, ""), time.time(), 0.0
        for _ in range(args.per_reader):
            text = mutate(rng, target)
            signal.setitimer(signal.ITIMER_REAL, args.timeout)
            t, c = time.perf_counter(), time.process_time()
            try:
                target.run(text)
            except target.allowed:
                pass
            except Timeout:
                crashes.append({"input": text[:2000], "bytes": len(text), "error": f"timeout > {args.timeout} s"})
            except BaseException as exc:  # noqa: BLE001 - any escape is the finding
                if isinstance(exc, KeyboardInterrupt):
                    raise
                crashes.append({"input": text[:2000], "bytes": len(text), "error": f"{type(exc).__name__}: {exc}"[:300],
                                "where": traceback.format_exc().splitlines()[-3][:300]})
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            dt, dc = time.perf_counter() - t, time.process_time() - c
            max_wall = max(max_wall, dt)
            if dc > slowest[0]:  # CPU time: on a shared machine wall time also counts the neighbours
                slowest = (dc, len(text), text)
        row = {"reader": target.name, "inputs": args.per_reader, "crashes": len(crashes), "first_crashes": crashes[:5],
               "slowest_cpu_seconds": round(slowest[0], 4), "slowest_chars": slowest[1],
               "slowest_input": slowest[2][:100_000], "max_wall_seconds": round(max_wall, 3),
               "wall_seconds": round(time.time() - t0, 1)}
        summary.append(row)
        print(f"{target.name}: {args.per_reader} inputs, {len(crashes)} crashes, slowest {slowest[0]:.3f} s CPU "
              f"({slowest[1]} chars; longest wall {max_wall:.3f} s), {row['wall_seconds']} s", flush=True)
        Path(args.out).write_text(json.dumps({"seed": args.seed, "per_reader": args.per_reader, "readers": summary,
                                              "seconds": round(time.time() - started, 1)}, indent=1))
    total = sum(r["crashes"] for r in summary)
    print(f"total: {sum(r['inputs'] for r in summary)} inputs, {total} crashes, {time.time() - started:.0f} s")
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Wall time a user waits for ``mpsready run``: the plain program, one release, every release (issue 39).

One run prints, per round (the cases interleaved, so a load spike on a shared machine hits each case of its round
alike) and as medians over ``--rounds``:

* ``plain``: ``python tiny.py`` (a script that imports torch and does a few ops; ``--script`` for another);
* ``one release``: ``mpsready run -q --torch 2.13 -- python tiny.py``;
* ``all releases``: ``mpsready run -q --torch all -- python tiny.py`` (every shipped minor release, one child
  each, forked from one zygote where the platform has ``fork``; ``--no-zygote`` or ``MPSREADY_ZYGOTE=0``: a fresh
  interpreter per release, the path before issue 39).

Goals (issue 39): all releases <= 2.5x one release; one release <= plain + 1.0 s.

    PYTHONPATH=src python benchmarks/matrix_bench.py [--rounds 3] [--script tiny.py] [--no-zygote] [--torch all]

Measured (issue 39, torch 2.13 CPU, 2 cores shared with other agents, load average 8-9, medians of the rounds;
the plain program's own time moved with the load between the two runs, so compare the ratios):

* after (zygote, thinner start), ``--rounds 3``: plain 2.44 s, one release 2.57 s, all 12 releases 4.31 s: all /
  one 1.67 (goal <= 2.5), one - plain 0.13 s (goal <= 1.0);
* before (commit d2a3715: a fresh interpreter per release, with the fix that lets several run at once),
  ``--rounds 2``: plain 3.75 s, one release 7.10 s, all 12 releases 46.18 s: all / one 6.51, one - plain 3.35 s.
  (Without that fix, on the commit before this issue, ``--torch all`` took 74 s and ended 10 of 12 releases
  ``no_result``, child status -9.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
TINY = """\
import torch
x = torch.randn(64, 64)
y = (x @ x).relu().sum()
m = torch.nn.Linear(64, 8)
print(float(m(x).sum()) != 0.0, float(y) > -1)
"""


def _wall(argv: list[str], env: dict[str, str], cwd: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1, 4):
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode()[-2000:]}")
    return seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--script", help="the program (default: a tiny torch script written to a temporary folder)")
    ap.add_argument("--torch", default="all", help="the matrix's --torch (default all)")
    ap.add_argument("--no-zygote", action="store_true", help="a fresh interpreter per release (MPSREADY_ZYGOTE=0)")
    args = ap.parse_args(argv)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    if args.no_zygote:
        env["MPSREADY_ZYGOTE"] = "0"
    with tempfile.TemporaryDirectory(prefix="matrix-bench-") as tmp:
        script = os.path.abspath(args.script) if args.script else os.path.join(tmp, "tiny.py")
        if not args.script:
            Path(script).write_text(TINY)
        run = [sys.executable, "-m", "mpsready", "run", "-q"]
        cases = {"plain": [sys.executable, script],
                 "one release": [*run, "--torch", "2.13", "--", "python", script],
                 "all releases": [*run, "--torch", args.torch, "--", "python", script]}
        times: dict[str, list[float]] = {k: [] for k in cases}
        print(f"{sys.executable}, {os.cpu_count()} CPU(s), {args.rounds} round(s), cases interleaved, wall seconds; "
              f"matrix --torch {args.torch}, {'no zygote' if args.no_zygote else 'zygote where fork exists'}")
        for n in range(args.rounds):
            for k, cmd in cases.items():
                times[k].append(_wall(cmd, env, tmp))
            print(f"round {n + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()), flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    print("median: " + ", ".join(f"{k} {v:.2f} s" for k, v in med.items()))
    print(f"all releases / one release {med['all releases'] / med['one release']:.2f} (goal <= 2.5); "
          f"one release - plain {med['one release'] - med['plain']:.2f} s (goal <= 1.0)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Wall time of ``mpsready migrate TREE --verify -- COMMAND`` with every run forked from one zygote (issue 39) against
fresh processes, in one run of this script.

Two variants, alternating (A B, B A, ...) so that a busy neighbour weighs on both alike:

- **fresh**: ``--before SRC`` (a checkout's ``src`` from before issue 39's verify zygote, e.g. ``git archive`` of
  that commit unpacked to /tmp) when given, else this checkout with ``MPSREADY_ZYGOTE=0`` (every run a fresh
  process: the CPU runs as before, the emulated Mac runs as fresh ``mpsready.run.child`` processes);
- **forked**: this checkout (``PYTHONPATH`` as given), the zygote on.

Prints each run's wall seconds and verdict, the medians and forked / fresh (the lower the better). Nothing is
written in TREE (``--verify`` works on temporary copies; the plan is not stored: ``--no-cache``).

    PYTHONPATH=src python benchmarks/verify_bench.py TREE [--rounds 3] [--before /tmp/before/src] [--torch 2.3,2.13]
        [--max-steps 3] -- python -m projects.adder.adder --trainer.num_workers=0 --data.ndigit=1

Figures (2-core machine shared with other agents, karpathy/minGPT 37baab7 copied to /tmp, the adder project with
one-digit sums, 3 optimizer steps, releases 2.3 and 2.13, ``--before`` the tree at 9e3c0f8, before this change),
medians: load 4-5, ``--rounds 4``: fresh 15.8 s, forked 9.6 s (0.61; best 12.8 -> 7.5 s); load 6-7, ``--rounds
5``: 38.6 -> 32.5 s (0.84); load 7-12, ``--rounds 3``: 51.7 -> 37.0 s (0.72). docs/migrate.md "Verify".
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def _once(tree: str, command: list[str], pythonpath: str, zygote: str, torch: str, max_steps: int) -> tuple[float,
                                                                                                          str]:
    env = dict(os.environ, PYTHONPATH=pythonpath, MPSREADY_ZYGOTE=zygote)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mpsready", "migrate", tree, "--no-cache", "--verify", "--torch", torch,
                           "--max-steps", str(max_steps), "--", *command], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    verdict = next((ln for ln in proc.stderr.splitlines() if ln.startswith("verified: ")), f"exit {proc.returncode}")
    return wall, verdict


def main(argv: list[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if "--" not in words:
        print("usage: verify_bench.py TREE [options] -- COMMAND", file=sys.stderr)
        return 2
    split = words.index("--")
    p = argparse.ArgumentParser()
    p.add_argument("tree")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--before", help="src folder of the checkout before the change (default: MPSREADY_ZYGOTE=0)")
    p.add_argument("--torch", default="2.3,2.13")
    p.add_argument("--max-steps", type=int, default=3)
    args = p.parse_args(words[:split])
    command = words[split + 1:]
    here = os.environ.get("PYTHONPATH", "")
    variants = {"fresh": (args.before or here, "1" if args.before else "0"), "forked": (here, "1")}
    times: dict[str, list[float]] = {name: [] for name in variants}
    for n in range(args.rounds):
        order = list(variants) if n % 2 == 0 else list(reversed(variants))
        for name in order:
            path, zygote = variants[name]
            wall, verdict = _once(args.tree, command, path, zygote, args.torch, args.max_steps)
            times[name].append(wall)
            print(f"round {n + 1} {name:<7} {wall:6.1f} s  {verdict}", flush=True)
    fresh, forked = (statistics.median(times[k]) for k in ("fresh", "forked"))
    print(f"median: fresh {fresh:.1f} s, forked {forked:.1f} s; forked / fresh {forked / fresh:.2f} "
          f"(best {min(times['fresh']):.1f} s -> {min(times['forked']):.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

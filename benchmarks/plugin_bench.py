"""The pytest plugin's cost on a real test suite: plain ``pytest`` against ``pytest --mps-emulate``.

Runs the suite at ``SUITE`` (a checkout whose tests run on the CPU) both ways, interleaved round by round (a load
spike hits both runs of its round alike), each in a fresh interpreter started in ``SUITE`` with this checkout's
``src`` first on ``PYTHONPATH`` (``-p mpsready.pytest_plugin`` then loads this checkout's plugin), and prints per
run the wall time and the CPU time of the child (user + system, ``resource.getrusage(RUSAGE_CHILDREN)`` before and
after), then the medians and the ratio emulated / plain of each. Goal (issue 39): <= 1.6x plain pytest.

Torch's intra-op threads are pinned to ``--threads`` (``OMP_NUM_THREADS``, default 1) in both runs: on a machine
with few, shared cores the threads' spin-waiting between small ops dominates both runs' times and hides what the
emulated Mac adds. Arguments after ``--`` go to pytest as they are (a subset of the tests, ``-o addopts=`` to drop
a project's coverage options); ``-q -p no:cacheprovider`` always (nothing written into the suite's folder).

    python benchmarks/plugin_bench.py SUITE [--rounds 2] [--threads 1] [--emulate 2.13] [-- PYTEST ARGS]

Measured (issue 39), kozistr/pytorch_optimizer at 7a076d2f8f09735e82f9ec1d2d389ec2526bbdbb (2,774 tests: 2,363
passed, 410 skipped, 1 failing plainly too, ``test_parse_version`` on a ``+cpu`` release string), torch 2.13 CPU,
2 shared, loaded cores, ``-- -o addopts= tests``: CPU time emulated / plain 1.98 and 1.90 before issue 39's second
round, 1.83 and 1.77 after (two runs of two rounds each, alternating with ``--src`` the commit before); two bare
observe-only modes (a function and a dispatch mode) cost 1.59 and 1.69: docs/ci.md. Issue 39's plugin round (CPU
calls on plain tensors below the dispatch mode while nothing is resident, Dynamo's wrapper only in a compiled
region), same machine and half hour: 2.45 with ``--src`` of the tree before (2 rounds), 1.75 after (3 rounds).
Issue 39's second plugin round (the dispatch mode off the stack while nothing is resident, emulate/dormant.py),
three pairs in the same minutes: 1.73 -> 1.51, 1.58 -> 1.56, 1.65 -> 1.72 with ``--src`` of the tree before ->
after (the load swamps it; callgrind's instruction counts of the test loop, 1.283x -> 1.244x plain: docs/ci.md).
Issue 39's third plugin round (the CIA kernels' decomposition without a per-call kernel look-up), ``--rounds 1 --
-o addopts= tests/test_optimizers.py -k test_f32_optimizers``, three pairs at load 12-16: 1.64, 1.31, 1.54 before,
1.75, 1.54, 1.29 after (the second run of each pair the slower: noise above the change; docs/ci.md). Each emulated
run here also re-rewrites the asserts of the mpsready modules it imports (pytest marks a plugin's distribution for
rewriting; ``PYTHONDONTWRITEBYTECODE`` keeps the rewrite from being cached), which a user's repeated runs do not pay.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def run_once(suite: Path, pytest_args: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """``(wall seconds, CPU seconds of the child, exit status)`` of one pytest run in ``suite``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args],
                          cwd=suite, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    rest: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite", type=Path, help="the test suite's checkout (pytest runs there)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS of both runs (0: leave it unset)")
    ap.add_argument("--emulate", default="", help="the --mps-emulate value (default: the installed release)")
    ap.add_argument("--src", type=Path, default=SRC, help="the mpsready checkout's src to measure (default: this one)")
    args = ap.parse_args(argv)
    suite = args.suite.resolve()
    if not suite.is_dir():
        print(f"plugin_bench: {args.suite} is not a folder", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.src.resolve()), env.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written into the suite's folder
    if args.threads:
        env["OMP_NUM_THREADS"] = str(args.threads)
    emulate = f"--mps-emulate={args.emulate}" if args.emulate else "--mps-emulate="
    # -p: the plugin by its module name, which is its entry point's name too (no double registration)
    cases = {"plain": ["-p", "mpsready.pytest_plugin", *rest],
             "emulated": ["-p", "mpsready.pytest_plugin", emulate, *rest]}
    runs: dict[str, list[tuple[float, float, int]]] = {k: [] for k in cases}
    print(f"{suite}, {args.rounds} round(s), OMP_NUM_THREADS={env.get('OMP_NUM_THREADS', 'unset')}, "
          f"pytest args: {' '.join(rest) or '(none)'}")
    for r in range(args.rounds):
        for name, pytest_args in cases.items():
            wall, cpu, code = run_once(suite, pytest_args, env)
            runs[name].append((wall, cpu, code))
            print(f"round {r + 1} {name:8s}: wall {wall:6.2f} s, CPU {cpu:6.2f} s, exit {code}", flush=True)
            if code not in (0, 1):  # 2-5: interrupted, internal or usage error, nothing collected: no measure
                print(f"plugin_bench: pytest exited {code} ({name}): run it by hand in {suite} to see why",
                      file=sys.stderr)
                return 2
    med = {k: (statistics.median(w for w, _, _ in v), statistics.median(c for _, c, _ in v)) for k, v in runs.items()}
    print(f"median wall: plain {med['plain'][0]:.2f} s, emulated {med['emulated'][0]:.2f} s, "
          f"ratio {med['emulated'][0] / med['plain'][0]:.2f}")
    print(f"median CPU:  plain {med['plain'][1]:.2f} s, emulated {med['emulated'][1]:.2f} s, "
          f"ratio {med['emulated'][1] / med['plain'][1]:.2f} (goal <= 1.6)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

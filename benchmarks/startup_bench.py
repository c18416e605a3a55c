"""Start-up cost of the CLI: ``mpsready --help`` and a 1-file scan against ``python -c pass``.

Each case runs in a fresh interpreter, the cases interleaved round by round (paired runs: a load spike hits
every case of its round alike), and the CPU time of each child (user + system, from
``resource.getrusage(RUSAGE_CHILDREN)`` before and after) is kept; the medians are printed with their ratio
to ``python -c pass``. Two modes:

* ``no bytecode cache``: ``PYTHONDONTWRITEBYTECODE=1`` and no ``PYTHONPYCACHEPREFIX``: a checkout that never
  wrote its ``__pycache__`` compiles every mpsready module from source on each run (this project's test
  machine), while the standard library and site-packages read the bytecode they shipped with;
* ``bytecode cache``: ``PYTHONDONTWRITEBYTECODE`` unset and ``PYTHONPYCACHEPREFIX`` a temporary folder warmed
  by one run first (what an installed wheel or any second run gets).

The CLI runs as the console script does (``from mpsready.cli import main``), from this checkout's ``src``;
``python -m mpsready`` costs ``runpy`` on top (printed too). Goals (issue 25): ``--help`` <= 5x
``python -c pass``; a 1-file scan <= 0.25 s CPU with the bytecode cache.

    python benchmarks/startup_bench.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"  # --src: another checkout's, to compare before and after
MAIN = "import sys; from mpsready.cli import main; sys.exit(main())"


def _cpu_of(argv: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) the child ``argv`` used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _cases(project: Path) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "python -c pass": [py, "-c", "pass"],
        "mpsready --help": [py, "-c", MAIN, "--help"],
        "python -m mpsready --help": [py, "-m", "mpsready", "--help"],
        "mpsready scan (1 file, json)": [py, "-c", MAIN, "scan", "--no-cache", "--format", "json", "--exit-zero",
                                         str(project)],
        "mpsready scan (1 file, sarif)": [py, "-c", MAIN, "scan", "--no-cache", "--format", "sarif", "--exit-zero",
                                          str(project)],
    }


def _env(cache: str | None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(SRC), COLUMNS="120")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = cache
    return env


def measure(rounds: int, cached: bool, project: Path) -> dict[str, float]:
    """Median CPU seconds per case over ``rounds`` paired rounds."""
    cases = _cases(project)
    env = _env(tempfile.mkdtemp(prefix="startup-bench-pyc-") if cached else None)
    if cached:
        for argv in cases.values():  # warm the bytecode cache
            _cpu_of(argv, env)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, argv in cases.items():
            samples[name].append(_cpu_of(argv, env))
    return {name: statistics.median(v) for name, v in samples.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--src", type=Path, default=None, help="the src folder to measure (default: this checkout's)")
    args = ap.parse_args()
    global SRC
    if args.src is not None:
        SRC = args.src.resolve()
    if any(SRC.rglob("__pycache__")):
        print(f"note: {SRC} holds __pycache__ folders: the no-cache figures read them", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="startup-bench-project-") as tmp:
        project = Path(tmp)
        (project / "train.py").write_text("import torch\n\nmodel = torch.nn.Linear(4, 4).cuda()\n"
                                          "x = torch.zeros(2, 4, device='cuda')\nprint(model(x))\n")
        print(f"{SRC}: python {sys.version.split()[0]}, {args.rounds} paired rounds, median CPU s (user+sys) "
              "per run")
        for cached in (False, True):
            med = measure(args.rounds, cached, project)
            floor = med["python -c pass"]
            print(f"\n{'bytecode cache' if cached else 'no bytecode cache (PYTHONDONTWRITEBYTECODE=1)'}:")
            for name, sec in med.items():
                print(f"  {name:<32} {sec:7.3f} s  {sec / floor:6.1f}x python -c pass")


if __name__ == "__main__":
    main()

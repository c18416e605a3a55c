"""Scan speed on a large real tree (default: the installed torch package, about 1.2 M lines).

Prints files, lines, seconds (wall and CPU of this process) and ratios to the parse floor for:
  floor   a plain ast.parse of every .py file in one process (the goal's reference),
  floor with the GC paused: the same with the cyclic garbage collector paused, as the scan does,
  cold    mpsready scan with no cache, one process (prefilter on, and with --compare also off),
  pool    the same with a process pool of --jobs processes (wall only; skipped with --jobs 1),
  warm    the scan again with the cache filled (goal: under 1 s),
  ruff    `ruff check` (its default rules, no cache) on the same tree in the same run: the ratio of the pool
          scan's wall time to ruff's is printed (goal of issue 11: the pool scan no slower than the floor).
Each of floor and cold runs --repeat times, interleaved, and the medians are reported: the machine
this was written on is shared, so compare CPU seconds first.

    PYTHONPATH=src python benchmarks/scan_bench.py [TREE] [--repeat 3] [--compare] [--jobs N]

Last figures (2026-12-02, 2 shared cores under load, ``--repeat 3 --jobs 1``, cold CPU / floor, sessions
alternating with main): torch package 1.13, 1.07, 1.14 (main 1.38, 1.20, 1.26; issue 25's goal <= 1.3),
pytorch-image-models 1.09 and 1.10 (main 1.04 and 1.09). The floor's run-to-run spread (9-26%) is larger than the
difference between the two: compare the cold CPU seconds of one session too. Details in docs/scan.md, "Figures".
2026-12-07 (same session, ``--jobs 1``): torch package cold CPU 13.23 and 13.48 s (1.44, 1.48) on main 4cc3bd0,
12.40 and 12.27 s (1.31, 1.33) after the reach walks and reference cycles were cut; identical findings.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path


def default_tree() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("torch")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed; pass a TREE to scan")
    return Path(list(spec.submodule_search_locations)[0])


def timed(fn):
    """(result, wall seconds, CPU seconds of this process)."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def parse_floor(tree: Path, gc_off: bool = False) -> tuple[int, int]:
    files = sorted(p for p in tree.rglob("*.py") if p.is_file())
    lines = 0
    if gc_off:
        from mpsready.scan.engine import gc_paused

        with gc_paused():
            return parse_floor(tree)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in files:
            data = p.read_bytes()
            lines += data.count(b"\n")
            try:
                ast.parse(data)
            except (SyntaxError, ValueError):
                pass
    return len(files), lines


def ruff_wall(tree: Path, repeat: int) -> float | None:
    """Median wall seconds of `ruff check --no-cache --exit-zero` on ``tree`` (ruff's default rules), or None
    when ruff is not installed."""
    exe = shutil.which("ruff") or shutil.which("ruff", path=str(Path(sys.executable).parent))
    if exe is None:
        return None
    walls = []
    for _ in range(repeat):
        w0 = time.perf_counter()
        subprocess.run([exe, "check", "--no-cache", "--exit-zero", "--quiet", "--isolated", str(tree)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        walls.append(time.perf_counter() - w0)
    return statistics.median(walls)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tree", nargs="?", type=Path)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--compare", action="store_true", help="also time the cold scan with the prefilter off")
    args = ap.parse_args()
    tree = args.tree or default_tree()
    from mpsready.scan import ScanConfig, scan_path
    from mpsready.scan.code import analyzer

    def cold(prefilter: bool):
        analyzer.PREFILTER = prefilter
        try:
            return scan_path(tree, ScanConfig(jobs=1, cache_dir=None))
        finally:
            analyzer.PREFILTER = True

    runs: dict[str, list[tuple[float, float]]] = {}
    results = {}
    modes = [("cold   prefilter on", True)] + ([("cold   prefilter off", False)] if args.compare else [])
    for _ in range(args.repeat):
        (n, lines), wall, cpu = timed(lambda: parse_floor(tree))
        runs.setdefault("floor  ast.parse only", []).append((wall, cpu))
        _, wall, cpu = timed(lambda: parse_floor(tree, gc_off=True))
        runs.setdefault("floor  GC paused", []).append((wall, cpu))
        for label, flag in modes:
            results[label], wall, cpu = timed(lambda flag=flag: cold(flag))
            runs.setdefault(label, []).append((wall, cpu))
    floor_wall = statistics.median(w for w, _ in runs["floor  ast.parse only"])
    floor_cpu = statistics.median(c for _, c in runs["floor  ast.parse only"])
    print(f"tree: {tree}  files={n} lines={lines}  (medians of {args.repeat}; ratio = scan / floor)")
    for label, rs in runs.items():
        wall, cpu = statistics.median(w for w, _ in rs), statistics.median(c for _, c in rs)
        r = results.get(label)
        extra = f" findings={len(r.findings)} files={r.files_scanned} lines={r.lines_scanned}" if r else ""
        print(f"{label:22s} wall={wall:6.2f} s cpu={cpu:6.2f} s  ratio wall={wall / floor_wall:.2f} "
              f"cpu={cpu / floor_cpu:.2f}   (wall runs: {', '.join(f'{w:.1f}' for w, _ in rs)}){extra}")
    pool_wall = None
    if args.jobs > 1:
        walls = []
        for _ in range(args.repeat):
            r, wall, _ = timed(lambda: scan_path(tree, ScanConfig(jobs=args.jobs, cache_dir=None)))
            walls.append(wall)
        pool_wall = statistics.median(walls)
        print(f"{'pool   ' + str(args.jobs) + ' processes':22s} wall={pool_wall:6.2f} s  ratio wall={pool_wall / floor_wall:.2f}"
              f"   (wall runs: {', '.join(f'{w:.1f}' for w in walls)})")
    ruff = ruff_wall(tree, args.repeat)
    if ruff is None:
        print("ruff   not installed (pip install ruff, or the dev extra): no ratio to ruff")
    else:
        scan_wall = pool_wall if pool_wall is not None else statistics.median(w for w, _ in runs["cold   prefilter on"])
        print(f"{'ruff   check':22s} wall={ruff:6.2f} s  scan/ruff wall={scan_wall / ruff:.2f}  "
              f"floor/ruff wall={floor_wall / ruff:.2f}")
    with tempfile.TemporaryDirectory() as cache:
        scan_path(tree, ScanConfig(jobs=1, cache_dir=Path(cache)))  # fill the cache
        warm, wall, cpu = timed(lambda: scan_path(tree, ScanConfig(jobs=1, cache_dir=Path(cache))))
    print(f"{'warm   cache filled':22s} wall={wall:6.2f} s cpu={cpu:6.2f} s  ratio wall={wall / floor_wall:.2f} "
          f"(cache hits: {warm.cache_hits})")


if __name__ == "__main__":
    sys.exit(main())

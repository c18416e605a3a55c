"""Scan speed on a large real tree (default: the installed torch package, about 1.2 M lines).

Prints files, lines, seconds and ratios for:
  floor   a plain ast.parse of every .py file in one process (the parse floor),
  cold    mpsready scan with an empty cache (serial, then with a process pool),
  warm    the same scan again with the cache filled (goal: under 1 s).

    PYTHONPATH=src python benchmarks/scan_bench.py [TREE] [--jobs N]
"""

from __future__ import annotations

import argparse
import ast
import os
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


def parse_floor(tree: Path) -> tuple[int, int, float]:
    files = sorted(p for p in tree.rglob("*.py") if p.is_file())
    t0 = time.perf_counter()
    lines = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in files:
            data = p.read_bytes()
            lines += data.count(b"\n")
            try:
                ast.parse(data)
            except (SyntaxError, ValueError):
                pass
    return len(files), lines, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tree", nargs="?", type=Path)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    tree = args.tree or default_tree()
    from mpsready.scan import ScanConfig, scan_path

    n, lines, floor = parse_floor(tree)
    print(f"tree: {tree}")
    print(f"floor  ast.parse only      files={n} lines={lines} seconds={floor:.2f}")
    with tempfile.TemporaryDirectory() as cache:
        rows = []
        for label, jobs in (("cold   serial (1 process)", 1), (f"cold   pool ({args.jobs} processes)", args.jobs)):
            if jobs == 1 and label.startswith("cold   pool"):
                continue
            t0 = time.perf_counter()
            r = scan_path(tree, ScanConfig(jobs=jobs, cache_dir=None))
            rows.append((label, r, time.perf_counter() - t0))
        t0 = time.perf_counter()
        scan_path(tree, ScanConfig(jobs=args.jobs, cache_dir=Path(cache)))  # fill the cache
        fill = time.perf_counter() - t0
        t0 = time.perf_counter()
        warm = scan_path(tree, ScanConfig(jobs=args.jobs, cache_dir=Path(cache)))
        rows.append(("warm   cache filled", warm, time.perf_counter() - t0))
    n2, _, floor2 = parse_floor(tree)  # again: the machine's load changes during a long benchmark
    print(f"floor  again (after)       files={n2} seconds={floor2:.2f}")
    floor = (floor + floor2) / 2
    for label, r, secs in rows:
        print(f"{label:27s} files={r.files_scanned} lines={r.lines_scanned} findings={len(r.findings)} "
              f"seconds={secs:.2f} ratio_to_mean_floor={secs / floor:.2f}")
    print(f"(cache fill run: {fill:.2f} s; warm run cache hits: {warm.cache_hits})")


if __name__ == "__main__":
    sys.exit(main())

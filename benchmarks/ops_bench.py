"""Speed of the shipped MPS support tables: cold load of one release + lookups of thousands of overloads.

    PYTHONPATH=src python benchmarks/ops_bench.py [--release 2.13] [--repeat 5]

Target (issue 3): loading a release and looking up thousands of overloads in well under 100 ms.
Prints each measurement and its ratio to the target (< 1.0 is within target).
"""

from __future__ import annotations

import argparse
import time

TARGET_MS = 100.0


def _cold(api) -> None:
    api._index.cache_clear()
    api._load_release.cache_clear()
    api._history_facts.cache_clear()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--release", default="2.13")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from mpsready.ops import api

    best = {"load": 1e9, "lookup_all": 1e9, "load_and_lookup": 1e9}
    n = 0
    for _ in range(args.repeat):
        _cold(api)
        t0 = time.perf_counter()
        db = api.load_db(args.release)
        t1 = time.perf_counter()
        names = [f"aten::{k}" for k in db.op_names()]
        for name in names:
            db.lookup(name, macos="14.4")
        t2 = time.perf_counter()
        n = len(names)
        best["load"] = min(best["load"], (t1 - t0) * 1e3)
        best["lookup_all"] = min(best["lookup_all"], (t2 - t1) * 1e3)
        best["load_and_lookup"] = min(best["load_and_lookup"], (t2 - t0) * 1e3)
    print(f"torch {db.torch_version}: {n} overloads, best of {args.repeat} (cold caches each time)")
    for key, ms in best.items():
        print(f"  {key:<16} {ms:8.2f} ms   ratio to {TARGET_MS:.0f} ms target: {ms / TARGET_MS:.3f}")
    all_ms = 0.0
    _cold(api)
    t0 = time.perf_counter()
    for release in api.shipped_versions():
        api.load_db(release)
    all_ms = (time.perf_counter() - t0) * 1e3
    print(f"  load all {len(api.shipped_versions())} releases: {all_ms:.2f} ms (ratio {all_ms / TARGET_MS:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

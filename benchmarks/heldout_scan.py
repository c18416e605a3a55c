"""Score the static outlook against hand-labelled repositories: does ``mpsready scan`` give the label's verdict?

The labels live in ``benchmarks/data/heldout_repos_2026_12.json`` (each repository labelled by hand from its
files at the commit named, before any run of mpsready; ``half`` fixed by the first hex digit of
sha1("owner/name")). The repositories themselves are not in this repository: export each at its commit into
``EXPORTS/<name>`` (``git archive COMMIT | tar -x``) first. The scan is run as a user runs it::

    mpsready scan EXPORTS/<name> --no-cache --format json --exit-zero -q

    PYTHONPATH=src python benchmarks/heldout_scan.py EXPORTS [--half tune|held_out|all] [--labels FILE] [--save DOCS]

Prints one row per repository (label, verdict, the flags or the number of edits) and per half the agreement, the
``runs_on_mac`` recall and the number of verdicts more optimistic than their label, then the census of the half's
misses (``benchmarks/scan_census.py``: per miss the deciding findings or credits, and the count by label, verdict and
deciding key). ``--save DOCS`` writes each scan's JSON document to ``DOCS/<name>.json`` for ``scan_census.py``.
Every verdict is a prediction of the static scan; nothing was run on a Mac. Exit 0 whatever the score (2 on a usage error).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "benchmarks" / "data" / "heldout_repos_2026_12.json"
RANK = {"stay_on_cuda": 0, "mac_for_dev": 1, "runs_on_mac": 2}
_spec = importlib.util.spec_from_file_location("scan_census", Path(__file__).resolve().with_name("scan_census.py"))
assert _spec is not None and _spec.loader is not None
census = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(census)


def scan(path: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "mpsready", "scan", str(path), "--no-cache", "--format", "json",
                           "--exit-zero", "-q"], capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("exports", help="folder holding one exported repository per <name>")
    ap.add_argument("--half", choices=("tune", "held_out", "all"), default="all")
    ap.add_argument("--labels", default=str(LABELS))
    ap.add_argument("--save", help="folder to write each scan's JSON document to (DOCS/<name>.json)")
    args = ap.parse_args(argv)
    try:
        rows = json.loads(Path(args.labels).read_text())["repos"]
    except (OSError, ValueError, KeyError) as exc:
        print(f"heldout_scan: cannot read {args.labels}: {exc}", file=sys.stderr)
        return 2
    if args.save:
        Path(args.save).mkdir(parents=True, exist_ok=True)
    halves = ("tune", "held_out") if args.half == "all" else (args.half,)
    for half in halves:
        agree = optimistic = recall = runs = n = 0
        misses = []
        print(f"## {half}")
        print("| repo | label | verdict | command line or edits |")
        print("|---|---|---|---|")
        for r in (r for r in rows if r["half"] == half):
            path = Path(args.exports) / r["repo"].split("/")[1]
            if not path.is_dir():
                print(f"| {r['repo']} | {r['label']} | (not exported) | |")
                continue
            doc = scan(path)
            n += 1
            if args.save:
                (Path(args.save) / f"{path.name}.json").write_text(json.dumps(doc))
            if "error" in doc:
                print(f"| {r['repo']} | {r['label']} | error: {doc['error']} | |")
                continue
            out = doc["outlook"]
            verdict = out["verdict"]
            agree += verdict == r["label"]
            optimistic += RANK[verdict] > RANK[r["label"]]
            if r["label"] == "runs_on_mac":
                runs += 1
                recall += verdict == "runs_on_mac"
            how = " ".join(out.get("commands") or out.get("flags") or []) if verdict == "runs_on_mac" else \
                f"{len(out.get('edits') or [])} edit(s)"
            mark = "" if verdict == r["label"] else " **differs**"
            miss = census.decision(doc, r["label"])
            if miss is not None:
                misses.append((r["repo"], miss))
            print(f"| {r['repo']} | {r['label']} | {verdict}{mark} | {how}{'' if out.get('complete', True) else ' (incomplete)'} |")
        print(f"\n{half}: agreement {agree}/{n}; runs_on_mac recall {recall}/{runs}; "
              f"more optimistic than the label: {optimistic}\n")
        if misses:
            print(f"### {half}: census of the misses\n")
            print("\n".join(census.render_misses(misses)) + "\n")
            print("\n".join(census.render_census(census.census(d for _r, d in misses))) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

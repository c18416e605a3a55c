"""Census of the static verdict's misses: for each labelled repository whose verdict differs from its label, the
class of the decision (issue 32, round 9).

A miss is **too pessimistic** (the verdict below the label) or **too optimistic** (above it). For a too pessimistic
verdict the decision is held down by the outlook's limiting findings (``outlook.limiting``): the census names their
rule codes, each finding's ``file:line`` and the chain of imports from the entry that reaches it
(``evidence.main_path``). For a too optimistic verdict it names the *credits* that lifted it: the findings that would
limit a main path but do not, and why (``scope:examples``, ``reach:off_main_path``, ``mac_never``, ``optional``,
``flag``, ...), or ``nothing found`` when the scan saw no limit at all. Each repository gets one deciding key (the
sorted rule codes of its limits, or the sorted credit kinds of its lift), and the census counts repositories by
(label, verdict, deciding key): the largest classes are the ones a general rule would move.

The documents are the scan's JSON (``mpsready scan --format json``) saved per repository by
``benchmarks/heldout_scan.py --save DIR`` as ``DIR/<export>.json``::

    PYTHONPATH=src python benchmarks/heldout_scan.py EXPORTS --labels FILE --save DOCS
    python benchmarks/scan_census.py --set NAME FILE DOCS [--set NAME2 FILE2 DOCS2 ...] [--half tune|held_out|all]

Prints one row per miss and the count table over every set given. Every verdict is a prediction of the static scan.
Exit 0 whatever the census (2 on a usage error).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping

RANK = {"stay_on_cuda": 0, "mac_for_dev": 1, "runs_on_mac": 2}
OFF_PATH_REACH = ("off_main_path", "demo_notebook", "module_demo", "container")
# evidence keys that say why a finding that would limit does not (the scan's passes set them); checked in this order
CREDIT_KEYS = ("optional", "other_entries", "secondary_cpu", "mac_never", "mps_excluded", "uncalled",
               "off_path_callers", "caller_guard")
SILENT_CPU = ("API104",)
# a finding that would hold a verdict at stay_on_cuda: a kernel or extension, a CUDA-only assert, a package with no Mac path
HARD_CODES = ("EXT101", "EXT102", "EXT103", "EXT104", "EXT105", "EXT106", "API120")
SHOWN = 5  # findings shown per miss


def _where(f: Mapping[str, Any]) -> str:
    loc = f.get("location") or {}
    return f"{loc.get('path')}:{loc.get('line')}" if loc.get("line") is not None else str(loc.get("path"))


def _chain(f: Mapping[str, Any]) -> str:
    why = (f.get("evidence") or {}).get("main_path") or {}
    if not why:
        return ""
    return "every file counts" if why.get("entry") is None else " -> ".join(why.get("chain") or ())


def _full(doc: Mapping[str, Any], ref: Mapping[str, Any]) -> Mapping[str, Any]:
    """The finding of ``doc`` a limiting ref ``{"code", "path", "line"}`` names (the ref itself when not found)."""
    for f in doc.get("findings") or ():
        loc = f.get("location") or {}
        if (f["code"], loc.get("path"), loc.get("line")) == (ref["code"], ref.get("path"), ref.get("line")):
            return f
    return {"code": ref["code"], "location": {"path": ref.get("path"), "line": ref.get("line")}}


def credit_of(f: Mapping[str, Any]) -> str | None:
    """Why a finding that would limit a main path does not limit this one, or None when it is no such finding. A
    would-be limit is a blocker, a CUDA-or-CPU choice (API104) that is not info, or a finding an excusing pass
    marked (:data:`CREDIT_KEYS`: such passes may also lower the severity)."""
    ev = f.get("evidence") or {}
    marked = next((k for k in CREDIT_KEYS if ev.get(k)), None)
    would = f.get("severity") == "blocker" or (f["code"] in SILENT_CPU and f.get("severity") != "info") \
        or marked is not None
    if not would or f["code"].startswith("INP"):
        return None
    if f.get("scope", "main") != "main":
        return f"scope:{f['scope']}"
    if ev.get("reach") in OFF_PATH_REACH:
        return "other_entries" if ev.get("other_entries") else f"reach:{ev['reach']}"
    if ev.get("behind_flag"):
        return "behind_flag"
    if marked:
        return marked
    remedy = (ev.get("remedy") or {}).get("kind")
    if remedy in ("flag", "swap", "wire"):
        return remedy
    return None


def decision(doc: Mapping[str, Any], label: str) -> dict[str, Any] | None:
    """The class of a verdict that differs from ``label`` (None when they agree): ``direction``, the ``key`` it is
    counted by and ``details`` (one ``CODE file:line [why] (chain)`` text per deciding finding, at most :data:`SHOWN`;
    ``total`` counts them all)."""
    out = doc["outlook"]
    verdict = out["verdict"]
    if verdict == label:
        return None
    base = {"label": label, "verdict": verdict, "decided_by": out.get("decided_by", "")}
    if RANK[verdict] < RANK[label]:
        found = [_full(doc, ref) for ref in out.get("limiting") or ()]
        details = []
        for f in found:
            chain = _chain(f)
            remedy = ((f.get("evidence") or {}).get("remedy") or {}).get("kind")
            details.append(f"{f['code']} {_where(f)}" + (f" [{remedy}]" if remedy else "") +
                           (f" ({chain})" if chain else ""))
        codes = sorted({f["code"] for f in found})
        return {**base, "direction": "too_pessimistic", "key": "+".join(codes) or "(no limit named)",
                "details": details[:SHOWN], "total": out.get("limiting_total", len(found))}
    credited = []
    for f in doc.get("findings") or ():
        why = credit_of(f)
        if why is None or (why in ("swap", "wire") and verdict == "runs_on_mac"):
            continue
        if why == "flag" and verdict != "runs_on_mac":
            continue
        if label == "stay_on_cuda" and not _hard_kind(f):  # only what would have held it on CUDA lifted it
            continue
        credited.append((why, f))
    kinds = sorted({why for why, _f in credited})
    details = [f"{f['code']} {_where(f)} [{why}]" + (f" ({_chain(f)})" if _chain(f) else "") for why, f in credited]
    return {**base, "direction": "too_optimistic", "key": "+".join(kinds) or "nothing found",
            "details": details[:SHOWN], "total": len(credited)}


def _hard_kind(f: Mapping[str, Any]) -> bool:
    """Whether ``f`` is of a kind that holds a verdict at ``stay_on_cuda`` where it limits: a kernel, extension or
    CUDA-only assert (:data:`HARD_CODES`), a finding marked ``no_alternative``, or a dependency with a remedy
    (a swap or wire: the scan's judgement that it has a Mac path)."""
    ev = f.get("evidence") or {}
    return f["code"] in HARD_CODES or bool(ev.get("no_alternative")) or \
        (f["code"].startswith("DEP") and (ev.get("remedy") or {}).get("kind") in ("swap", "wire", "none"))


def by_code(decisions: Iterable[Mapping[str, Any]]) -> list[tuple[str, str, str, int]]:
    """(label, verdict, one code or credit kind, repos holding it) over ``decisions``: a repository counts once for
    each code (or credit kind) of its key, so a class shared by differently mixed misses shows its full size."""
    counts: Counter = Counter()
    for d in decisions:
        for part in d["key"].split("+"):
            counts[(d["label"], d["verdict"], part)] += 1
    return sorted(((*k, n) for k, n in counts.items()), key=lambda r: (-r[3], r[0], r[1], r[2]))


def census(decisions: Iterable[Mapping[str, Any]]) -> list[tuple[str, str, str, int]]:
    """(label, verdict, key, count) over ``decisions``, largest first (then by label, verdict, key)."""
    counts = Counter((d["label"], d["verdict"], d["key"]) for d in decisions)
    return sorted(((*k, n) for k, n in counts.items()), key=lambda r: (-r[3], r[0], r[1], r[2]))


def render_misses(rows: Iterable[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """Markdown lines: one row per miss ``(name, decision)``."""
    lines = ["| repo | label | verdict | class | deciding findings (of total) | decided_by |", "|---|---|---|---|---|---|"]
    for name, d in rows:
        shown = "; ".join(d["details"]) + (f" (+{d['total'] - len(d['details'])} more)"
                                           if d["total"] > len(d["details"]) else "")
        lines.append(f"| {name} | {d['label']} | {d['verdict']} | {d['direction']}: {d['key']} | {shown} | "
                     f"{d['decided_by']} |")
    return lines


def render_census(table: Iterable[tuple[str, str, str, int]], what: str = "deciding key") -> list[str]:
    lines = [f"| label | verdict | {what} | repos |", "|---|---|---|---|"]
    lines += [f"| {label} | {verdict} | {key} | {n} |" for label, verdict, key, n in table]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", nargs=3, action="append", metavar=("NAME", "LABELS", "DOCS"), required=True,
                    help="a labelled set: its name, its labels file and the folder of saved scan documents")
    ap.add_argument("--half", choices=("tune", "held_out", "all"), default="all")
    args = ap.parse_args(argv)
    misses: list[tuple[str, Mapping[str, Any]]] = []
    missing: list[str] = []
    for name, labels, docs in args.set:
        try:
            repos = json.loads(Path(labels).read_text())["repos"]
        except (OSError, ValueError, KeyError) as exc:
            print(f"scan_census: cannot read {labels}: {exc}", file=sys.stderr)
            return 2
        for r in repos:
            if args.half != "all" and r.get("half") != args.half:
                continue
            export = r["repo"].split("/")[1]  # the name heldout_scan.py exports and saves it under
            path = Path(docs) / f"{export}.json"
            try:
                doc = json.loads(path.read_text())
            except (OSError, ValueError):
                missing.append(f"{name}/{export}")
                continue
            if "outlook" not in doc:
                missing.append(f"{name}/{export}")
                continue
            d = decision(doc, r["label"])
            if d is not None:
                misses.append((f"{name}/{r['repo']}", d))
    print("\n".join(render_misses(misses)))
    print()
    print("\n".join(render_census(census(d for _n, d in misses))))
    print()
    print("\n".join(render_census(by_code(d for _n, d in misses), "one code or credit")))
    if missing:
        print(f"\nno document for: {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

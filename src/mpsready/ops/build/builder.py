"""Build the shipped per-release MPS support tables (maintainers only; never run at the user's run time).

    PYTHONPATH=src python -m mpsready.ops.build [--cache DIR] [--releases 2.3.1 ...] [--out DIR] [--reuse-shipped]
    PYTHONPATH=src python -m mpsready.ops.build --api-names [--releases ...] [--cache DIR] [--refresh]
    PYTHONPATH=src python -m mpsready.ops.build --envelope [--samples N] [-o FILE]

Per release V: ``fetch`` the wheel's few files (sha256 recorded), classify ``native_functions.yaml``
(``yaml_table``), overlay the curated MPSFallback.mm list and Python registrations (checked against the
wheel's ``torch/backends/mps/__init__.py`` parsed with ``ast``), routing rules, global rules and per-op
dtype/macOS exceptions from ``common_mps.py`` (2.8+), then check the counts against the research note's
measured table (``EXPECTED_COUNTS``) and write ``data/tables/torch-V.json.gz``; finally ``index.json.gz``
with every op's status per release (for since/fixed_in/removed_in). ``--reuse-shipped`` builds only ``--releases``
and reads every other release of ``RELEASES`` from its table already in ``--out`` for the index and the routing
check (how 2.2.2 was added without fetching the 19 other wheels again).
"""

from __future__ import annotations

import argparse
import ast
import gzip
import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from mpsready.ops.build import curated, fetch
from mpsready.ops.build.pyregs import BACKENDS_MPS, mps_impls
from mpsready.ops.build.yaml_table import DEVICE_CLASSES, YAML_MEMBER, YamlOp, classify_text
from mpsready.ops.format import HISTORY_CODES, INDEX_NAME, SCHEMA_NAME, SCHEMA_VERSION, table_name

# Every release users run from 2.2.2 on (the last release with a macOS x86_64 wheel: Intel Macs stop there), including
# the .0 releases where a fix first shipped and 2.12.
RELEASES = ("2.2.2", "2.3.0", "2.3.1", "2.4.0", "2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.7.0", "2.7.1", "2.8.0", "2.9.0", "2.9.1",
            "2.10.0", "2.11.0", "2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1")
TABLES_DIR = Path(__file__).resolve().parents[1] / "data" / "tables"

# Measured per release in /work/shared/research/mps_support_data.md §1.2 (yaml classes), test values:
# overloads, MPS device kernels (explicit + delegate), explicit, delegate, CEA, autogen, CIA, none, SparseMPS.
EXPECTED_COUNTS: dict[str, tuple[int, ...]] = {
    "2.3.1": (3098, 658, 382, 276, 429, 503, 835, 673, 0),
    "2.4.1": (3120, 665, 388, 277, 573, 507, 836, 539, 0),
    "2.5.1": (3134, 686, 405, 281, 581, 508, 839, 520, 0),
    "2.6.0": (3144, 707, 417, 290, 586, 511, 839, 501, 0),
    "2.7.1": (3148, 739, 434, 305, 586, 511, 839, 473, 0),
    "2.8.0": (3164, 813, 475, 338, 587, 514, 839, 411, 0),
    "2.9.1": (3171, 847, 499, 348, 588, 513, 842, 381, 108),
    "2.10.0": (3184, 855, 506, 349, 593, 518, 844, 374, 159),
    "2.11.0": (3194, 867, 515, 352, 598, 520, 841, 368, 161),
    "2.13.0": (3101, 890, 533, 357, 592, 517, 747, 355, 161),
    "2.14.1": (3103, 912, 549, 363, 592, 518, 745, 336, 162),
}
# Releases the research note did not measure. A patch release whose yaml has the same counts as its measured
# sibling is pinned to them (checked by the build: 2.3.0 = 2.3.1, ...); 2.12.0/2.12.1 have no measured sibling and
# are pinned to the counts this builder read from their wheels (torch-2.12.x-cp311-cp311-macosx_14_0_arm64.whl).
EXPECTED_COUNTS.update({"2.3.0": EXPECTED_COUNTS["2.3.1"], "2.4.0": EXPECTED_COUNTS["2.4.1"],
                        "2.5.0": EXPECTED_COUNTS["2.5.1"], "2.7.0": EXPECTED_COUNTS["2.7.1"],
                        "2.9.0": EXPECTED_COUNTS["2.9.1"], "2.14.0": EXPECTED_COUNTS["2.14.1"],
                        "2.12.0": (3216, 878, 523, 355, 600, 525, 847, 366, 161),
                        "2.12.1": (3216, 878, 523, 355, 600, 525, 847, 366, 161),
                        # read by this builder in torch-2.2.2-cp311-none-macosx_11_0_arm64.whl (the x86_64 wheel's
                        # yaml is byte-identical: sha256 equal, docs/emulation.md "torch 2.2 and the Intel Mac")
                        "2.2.2": (3068, 644, 370, 274, 419, 498, 830, 677, 0)})
COUNT_FIELDS = ("overloads", "mps_device", "explicit", "delegate", "composite_explicit", "autogen",
                "composite_implicit", "none", "sparse_mps")


def yaml_counts(ops: dict[str, YamlOp]) -> dict[str, int]:
    """The §1.2 columns for one classified yaml."""
    c = Counter(o.mps for o in ops.values())
    return {"overloads": len(ops), "mps_device": c["explicit"] + c["delegate"], "explicit": c["explicit"],
            "delegate": c["delegate"], "composite_explicit": c["composite_explicit"], "autogen": c["autogen"],
            "composite_implicit": c["composite_implicit"], "none": c["none"],
            "sparse_mps": sum(o.sparse_mps for o in ops.values())}


def _status_how(cls: str, op: YamlOp) -> tuple[str, str]:
    """yaml class -> (status, how) in the API vocabulary."""
    if cls == "explicit":
        return "kernel", "yaml:explicit"
    if cls == "delegate":
        return "kernel", f"yaml:delegate({op.via})"
    if cls == "composite_explicit":
        return "composite", f"yaml:{op.cea_key}"
    if cls == "composite_implicit":
        return "composite", "yaml:implicit"
    if cls == "autogen":
        return "composite", f"yaml:autogen({op.via})"
    return "missing", "yaml:none"


def _cuda_status(op: YamlOp) -> str:
    return _status_how(op.cuda, op)[0]


def wheel_version(files: Path) -> str | None:
    """``__version__`` from the wheel's ``torch/version.py`` (parsed with ``ast``), or None if absent."""
    path = files / "torch/version.py"
    if not path.exists():
        return None
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if (isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant)
                and any(isinstance(t, ast.Name) and t.id == "__version__"
                        for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))):
            return str(node.value.value)
    return None


def build_release(release: str, files: Path, extras: Any = None) -> dict[str, Any]:
    """Build one release's table from the extracted files under ``files`` (``fetch`` layout).

    Raises ``AssertionError`` when the wheel's version, the yaml counts (``EXPECTED_COUNTS``), the Python
    registrations or an overlay disagree with what is expected: stop and look, never ship a silent change.

    Long because it is one linear pass a maintainer reads top to bottom (yaml, registrations, overlays, checks,
    table), run once per release by ``python -m mpsready.ops.build``, never by a user.
    """
    info = json.loads((files / fetch.MANIFEST).read_text())
    version_py = wheel_version(files)
    if version_py is not None and version_py.split("+")[0] != release:
        raise AssertionError(f"{release}: the wheel's torch/version.py says {version_py}")
    yaml_bytes = (files / YAML_MEMBER).read_bytes()
    ops_yaml = classify_text(yaml_bytes.decode("utf-8"))
    counts = yaml_counts(ops_yaml)
    expected = EXPECTED_COUNTS.get(release)
    if expected is not None:
        got = tuple(counts[f] for f in COUNT_FIELDS)
        if got != expected:
            raise AssertionError(f"{release}: yaml counts {dict(zip(COUNT_FIELDS, got))} differ from the research "
                                 f"note's measured {dict(zip(COUNT_FIELDS, expected))}")
    yaml_src = f"torchgen/packaged/ATen/native/native_functions.yaml (torch {release})"
    sources = {"yaml": yaml_src}
    ops: dict[str, dict[str, Any]] = {}
    for name, op in ops_yaml.items():
        status, how = _status_how(op.mps, op)
        rec: dict[str, Any] | None = {"s": status, "h": how, "c": _cuda_status(op)}
        assert rec is not None  # (typed as the look-ups below, which may miss)
        if op.sparse_mps:
            rec["sp"] = 1
        if status == "missing" and op.delegate:
            # MPS's error names the structured out= overload a functional/in-place variant delegates to
            # ("aten::index_copy.out" for index_copy_: shared/cases litgpt_index_copy_kv_cache); the emulated
            # device quotes that name
            rec["dl"] = op.delegate
        if op.core:
            rec["core"] = 1
        ops[name] = rec

    # Python registrations: the curated list, cross-checked with the wheel's backends/mps file.
    py_file = files / BACKENDS_MPS
    parsed = set(mps_impls(py_file.read_text(encoding="utf-8"))) if py_file.exists() else set()
    py_entries = curated.for_release(curated.load("python_registrations")["entries"], release)
    curated_backends = {e["op"] for e in py_entries if e["file"] == BACKENDS_MPS}
    if parsed != curated_backends:
        raise AssertionError(f"{release}: {BACKENDS_MPS} registers {sorted(parsed)} for MPS, curated list says "
                             f"{sorted(curated_backends)}")
    for e in py_entries:
        if e["op"] not in ops:
            raise AssertionError(f"{release}: Python-registered op {e['op']} is not in the yaml")
        src_id = f"py:{e['file']}"
        sources[src_id] = (f"{e['file']} (torch {release}): torch.library impl(..., 'MPS')"
                           + ("; parsed with ast" if e["file"] == BACKENDS_MPS else "; research note §2.4"))
        rec = ops[e["op"]]
        rec.update(s="kernel", h=f"python:{e['file']}")
        rec.setdefault("src", ["yaml"]).append(src_id)

    # MPSFallback.mm registrations (boxed CPU fallback or guard).
    fb = curated.load("mps_fallback")
    sources["fallback"] = f"{fb['source']} (torch {release})"
    for e in curated.for_release(fb["entries"], release):
        rec = ops.get(e["op"])
        if rec is None:
            raise AssertionError(f"{release}: MPSFallback op {e['op']} is not in the yaml")
        rec.update(s=e["status"], h="curated:MPSFallback.mm")
        rec.setdefault("src", ["yaml"]).append("fallback")
        if e.get("note"):
            rec["note"] = e["note"]

    rules = curated.load("global_rules")
    for e in curated.for_release(rules["conditions"], release):
        rec = ops.get(e["op"])
        if rec is not None:
            rec.setdefault("cond", []).append(e["condition"])
            sid = f"cond:{e['op']}"
            sources[sid] = e["source"]
            rec.setdefault("src", ["yaml"]).append(sid)

    common_mps_info = None
    if extras is not None:
        common_mps_info = {"opinfo_keys": extras.keys, "unmapped_keys": extras.unmapped,
                           "unparsed_entries": extras.skipped, "complex_allowlist_size": extras.complex_allowlist,
                           "list_sizes": extras.list_sizes,
                           "ops_absent_from_yaml": sorted(n for n in extras.ops if n not in ops)}
        for name, extra in extras.ops.items():
            rec = ops.get(name)
            if rec is None:
                continue
            if extra.get("dx"):
                rec["dx"] = extra["dx"]
            if extra.get("mm"):
                rec["mm"] = extra["mm"]
            for cond in extra.get("cond", ()):
                if cond not in rec.setdefault("cond", []):
                    rec["cond"].append(cond)
            sources["common_mps"] = (f"torch/testing/_internal/common_mps.py (torch {release}), parsed with ast; "
                                     "OpInfo keys mapped by data/curated/opinfo_map.json + opinfo_overrides.yaml")
            rec.setdefault("src", ["yaml"]).append("common_mps")

    routing = {}
    for e in curated.for_release(curated.load("routing")["entries"], release):
        if e["from"] not in ops:
            continue
        target = next((t for t in e["to"] if t in ops), None)
        if target is None:
            continue
        r = {"to": target, "source": e["source"]}
        also = [w for w in e.get("with", ()) if w["op"] in ops and w.get("parent", w["op"]) in ops]
        if also:
            r["with"] = [dict(w) for w in also]
        if e.get("otherwise") == target:  # the conditional op does not exist yet: unconditional route
            routing[e["from"]] = r
            continue
        if e.get("condition"):
            r["condition"] = e["condition"]
        if e.get("otherwise") in ops:
            r["otherwise"] = e["otherwise"]  # the MPS path when `condition` does not hold
        routing[e["from"]] = r

    min_macos = [e for e in curated.for_release(rules["min_macos"], release)]
    if len(min_macos) != 1:
        raise AssertionError(f"{release}: {len(min_macos)} min_macos rules apply")
    strip = lambda e: {k: v for k, v in e.items() if k != "torch"}  # noqa: E731
    fallback = dict(rules["fallback"])
    fallback["issue"] = next(i["url"] for i in fallback.pop("issue") if curated.applies(i, release))
    status_counts = Counter(r["s"] for r in ops.values())
    return {
        "schema": {"name": SCHEMA_NAME, "version": SCHEMA_VERSION},
        "torch": release,
        "wheel": {"name": info["wheel"], "sha256": info["sha256"], "version": version_py},
        "yaml_sha256": hashlib.sha256(yaml_bytes).hexdigest(),
        "min_macos": min_macos[0]["min_macos"],
        "min_macos_source": min_macos[0]["source"],
        "dtype_rules": [strip(e) for e in curated.for_release(rules["dtype_rules"], release)],
        "size_limits": [strip(e) for e in curated.for_release(rules["size_limits"], release)],
        "fallback": fallback,
        "routing": routing,
        **_autocast(release, ops),
        # ops whose only device kernel is MPS (research note §9 pitfall 2): a CPU/CUDA trace never shows them
        # as themselves (linear, max_pool2d: CIA elsewhere; _mps_convolution, _lstm_mps: routed to)
        "mps_only_ops": sorted(n for n, o in ops_yaml.items()
                               if "MPS" in o.device_keys and "CPU" not in o.device_keys and o.cuda not in DEVICE_CLASSES),
        "counts": {"yaml": counts, "status": dict(sorted(status_counts.items()))},
        "common_mps": common_mps_info,
        "sources": sources,
        "ops": ops,
    }


AUTOCAST_POLICIES = ("lower_precision_fp", "fp32", "fp32_set_opt_dtype", "promote")


def _autocast(release: str, ops: dict[str, Any]) -> dict[str, Any]:
    """``autocast_mps`` (op names) and ``autocast_mps_policy`` for releases the curated list covers."""
    doc = curated.load("autocast_mps")
    if release not in doc["releases"]:
        return {"autocast_mps": [], "autocast_mps_policy": {},
                "autocast_mps_note": "not recovered for this release: the AutocastMPS list lives in the binary "
                                     "(research note §2.3); no list is shipped rather than a guessed one"}
    policy = {op: pol for pol in AUTOCAST_POLICIES for op in doc[pol]}
    absent = sorted(op for op in policy if op not in ops)
    if absent:
        raise AssertionError(f"{release}: AutocastMPS ops not in the yaml: {absent}")
    return {"autocast_mps": sorted(policy), "autocast_mps_policy": policy, "autocast_mps_note": doc["source"]}


def check_routing(tables: dict[str, dict[str, Any]]) -> None:
    """Every curated route must apply in at least one built release (catches misspelt op names)."""
    entries = curated.load("routing")["entries"]
    routed = {(e["from"], tuple(e["to"])) for e in entries}
    used = set()
    for t in tables.values():
        for e in entries:
            r = t["routing"].get(e["from"])
            if r is not None and r["to"] in e["to"]:
                used.add((e["from"], tuple(e["to"])))
    unused = sorted(routed - used)
    if tables and unused:
        raise AssertionError(f"routing entries that match no built release (check the op names): {unused}")
    # `with` ops (and their parents) dropped in every release are misspelt too
    kept = {(k, w["op"], w.get("parent")) for t in tables.values() for k, r in t["routing"].items()
            for w in r.get("with", ())}
    lost = sorted({(e["from"], w["op"], w.get("parent")) for e in entries for w in e.get("with", ())} - kept,
                  key=str)
    if tables and lost:
        raise AssertionError(f"routing `with` ops that match no built release (check the op names): {lost}")


def build_index(tables: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``{"releases": [...], "history": {op: "kkm-..."}}``: one status code per release (``HISTORY_CODES``)."""
    releases = list(tables)
    names = sorted(set().union(*(t["ops"] for t in tables.values())))
    history = {}
    for name in names:
        history[name] = "".join(HISTORY_CODES[t["ops"][name]["s"]] if name in t["ops"] else "-"
                                for t in tables.values())
    return {"schema": {"name": SCHEMA_NAME + "-index", "version": SCHEMA_VERSION}, "releases": releases,
            "wheels": {v: t["wheel"] for v, t in tables.items()}, "history": history}


def write_gz(doc: dict[str, Any], path: Path) -> None:
    data = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode("utf-8")
    with open(path, "wb") as fh:  # mtime=0: identical input gives identical bytes
        with gzip.GzipFile(fileobj=fh, mode="wb", compresslevel=9, mtime=0) as gz:
            gz.write(data)


def main(argv: list[str] | None = None) -> int:
    import sys

    argv = list(sys.argv[1:] if argv is None else argv)
    if "--api-names" in argv:  # the per-release public names (ops/build/api_names.py), its own options
        from mpsready.ops.build import api_names

        return api_names.main([a for a in argv if a != "--api-names"])
    if "--envelope" in argv:  # the evidence envelope of the MPS tests (ops/build/envelope.py), its own options
        from mpsready.ops.build import envelope

        return envelope.main([a for a in argv if a != "--envelope"])
    ap = argparse.ArgumentParser(prog="python -m mpsready.ops.build", description=__doc__.splitlines()[0])
    ap.add_argument("--releases", nargs="+", default=list(RELEASES))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/mpsready-torch-files"))
    ap.add_argument("--out", type=Path, default=TABLES_DIR)
    ap.add_argument("--no-download", action="store_true", help="use only releases already in --cache")
    ap.add_argument("--reuse-shipped", action="store_true",
                    help="read the releases of RELEASES not in --releases from their tables in --out (index, routing)")
    args = ap.parse_args(argv)
    from mpsready.ops.build import common_mps as cm

    tables: dict[str, dict[str, Any]] = {}
    missing = []
    for release in args.releases:
        files = args.cache / release
        if not (files / fetch.MANIFEST).exists():
            if args.no_download:
                missing.append(release)
                continue
            fetch.fetch(release, args.cache)
        extra = cm.ops_for_release(files, release)
        tables[release] = build_release(release, files, extra)
        t = tables[release]
        print(f"{release}: {t['counts']['yaml']['overloads']} overloads, {t['counts']['status']}, "
              f"wheel {t['wheel']['name']} sha256 {t['wheel']['sha256'][:12]}"
              + (f", common_mps: {len(extra.ops)} ops, unmapped keys {len(extra.unmapped)}" if extra else ""))
    built = dict(tables)
    if args.reuse_shipped:
        for release in RELEASES:
            if release not in tables and (args.out / table_name(release)).exists():
                with gzip.open(args.out / table_name(release), "rb") as fh:
                    tables[release] = json.loads(fh.read())
        order = {r: i for i, r in enumerate(RELEASES)}
        tables = dict(sorted(tables.items(), key=lambda kv: order.get(kv[0], len(order))))
    check_routing(tables)
    args.out.mkdir(parents=True, exist_ok=True)
    for release, table in built.items():
        write_gz(table, args.out / table_name(release))
    write_gz(build_index(tables), args.out / INDEX_NAME)
    if missing:
        print("missing releases (not in cache):", ", ".join(missing))
    return 0

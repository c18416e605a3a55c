"""Mine the evidence envelope of PyTorch's MPS tests (maintainers only; needs torch; issue 33 round 10).

    PYTHONPATH=src python -m mpsready.ops.build --envelope [--samples N] [-o FILE]

Envelope: ``test/test_mps.py``'s ``TestConsistency`` runs each OpInfo of ``op_db`` on MPS with the OpInfo's
``sample_inputs`` (``test_output_match``) and, for ops with autograd that ``common_mps.py``'s grad lists do not
exclude, takes ``torch.autograd.grad`` of the outputs with random gradients of the outputs' shapes
(``test_output_grad_match``). Here the same samples (float32, at most ``--samples`` per OpInfo) run on CPU under a
TorchDispatchMode that records, per aten overload dispatched at top level, the envelope features of its calls
(:func:`mpsready.ops.envelope.features`): the most dimensions, and whether any call had an empty tensor, floating
tensors of two dtypes, a non-contiguous tensor, a trailing size-1 dimension. Read from the installed release
(``torch.__version__``): the only release whose test material runs here; applied to every release, inferred.

Records (the gate: only families with one are marked): every op of the curated wrong-result and unverified-regime
tables (``mps_wrong_results.yaml``, ``mps_unverified_regimes.yaml``: public reports, each with its source), the
crash rules of ``mps_shape_rules.yaml``, and the OpInfos that the installed ``common_mps.py`` expects to fail or
skips on MPS for wrong values or aborts (``UNDEFINED_XFAILLIST``, ``ON_MPS_XFAILLIST``, ``SKIPLIST``,
``SKIPLIST_GRAD``), mapped to their aten overloads by the same traced samples. Prints the coverage.

Round 10b: the lists are read in every release that ships ``common_mps.py`` (2.8.0 onwards: before 2.8 the lists
lived in ``test/test_mps.py``, which no wheel carries), each from that release's macOS arm64 wheel
(``ops/build/fetch.py``: ``pip download``, sha256 recorded, only the file kept, in ``--cache``), and a record keeps
the releases whose file lists it. Entries whose comment paragraph puts them down to random draws (``random``,
``Philox``, ``randn``: MPS and CPU draw from different generators, so the mismatch is no MPS fault; 2.13.0 compares
random ops by summary statistics instead) are left out (:func:`common_mps_entries`). OpInfo keys are mapped to overloads by the
installed release's samples, else by the builder's OpInfo map (``curated/opinfo_map.json``); a key neither maps
is listed as unmapped.
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path
from typing import Any

from mpsready.ops.build import curated
from mpsready.ops.envelope import FILE, family, features

OUT = Path(__file__).resolve().parents[1] / "data" / "mined" / FILE
CACHE = Path("/tmp/mpsready-torch-files")
# common_mps.py lists whose entries are MPS wrong values, aborts or failures of an implemented op (not gaps)
RECORD_LISTS = ("UNDEFINED_XFAILLIST", "ON_MPS_XFAILLIST", "SKIPLIST", "SKIPLIST_GRAD")
GRAD_EXCLUDED = ("XFAILLIST_GRAD", "SKIPLIST_GRAD")
_FLOAT = ("float", "bfloat")


def _float32(value: ast.expr) -> bool:
    """Whether a list entry's dtypes (None: every dtype; a list of ``torch.X``) include float32."""
    if isinstance(value, ast.Constant) and value.value is None:
        return True
    return isinstance(value, (ast.List, ast.Tuple)) and any(
        isinstance(e, ast.Attribute) and e.attr in ("float32", "float") for e in value.elts)


def common_mps_lists(text: str, float32_only: bool = False) -> dict[str, set[str]]:
    """The keys of each dict literal assigned to a name of ``RECORD_LISTS + GRAD_EXCLUDED`` in ``common_mps.py``
    (parsed with ast; every assignment of the name, any branch); ``float32_only``: only keys whose dtypes include
    float32 (the dtype the envelope's samples run in)."""
    out: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name) and t.id in RECORD_LISTS + GRAD_EXCLUDED:
                    out.setdefault(t.id, set()).update(
                        k.value for k, v in zip(node.value.keys, node.value.values)
                        if isinstance(k, ast.Constant) and isinstance(k.value, str)
                        and (not float32_only or _float32(v)))
    return out


# a comment paragraph with one of these words puts an entry down to random draws, not to the MPS kernel
_RANDOM_WORDS = ("random", "philox", "randn")
# the releases whose wheels carry common_mps.py (its first release is 2.8.0)
FIRST_COMMON_MPS = (2, 8)


def common_mps_entries(text: str) -> dict[str, dict[str, str]]:
    """``common_mps_lists``'s keys with the comment paragraph nearest above each entry inside its dict literal
    (the entry's own comment or the heading of its run of entries; "" when none): list -> key -> comment. Entries
    whose paragraph names random draws (``_RANDOM_WORDS``: random ops, where MPS and CPU draw differently; 2.13's
    ``pca_lowrank``, whose seeded ``randn`` lands on other sign choices) are dropped."""
    import io
    import tokenize

    comments = {t.start[0]: t.string.lstrip("#").strip() for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type == tokenize.COMMENT and t.line.strip().startswith("#")}
    out: dict[str, dict[str, str]] = {}
    for node in ast.walk(ast.parse(text)):
        if not (isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            if not (isinstance(t, ast.Name) and t.id in RECORD_LISTS):
                continue
            for k in node.value.keys:
                if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                    continue
                line = next((ln for ln in range(k.lineno - 1, node.lineno, -1) if ln in comments), None)
                para: list[str] = []
                while line is not None and line in comments:  # the whole paragraph the nearest comment is in
                    para.insert(0, comments[line])
                    line -= 1
                said = " ".join(para)
                if any(w in said.lower() for w in _RANDOM_WORDS):
                    continue
                out.setdefault(t.id, {})[k.value] = said
    return out


def _tensors(obj: Any, into: list) -> None:
    import torch

    if isinstance(obj, torch.Tensor):
        into.append(obj)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            if isinstance(v, torch.Tensor):
                into.append(v)


def _overload(func) -> str:
    name = func._schema.name.split("::", 1)[1]
    return name if func._overloadname == "default" else f"{name}.{func._overloadname}"


def trace(op, samples: int, grad: bool, seen: dict[str, dict[str, Any]], primary: set[str]) -> None:
    """Run up to ``samples`` float32 CPU samples of the OpInfo ``op`` (and their backward when ``grad``) under a
    recording dispatch mode; merge each top-level aten overload's features into ``seen``; add the overloads named
    like the OpInfo to ``primary``."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    names = {getattr(op, "aten_name", None) or "", op.name.split(".")[-1], op.name.replace(".", "_")} - {""}

    class Rec(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func.namespace == "aten":
                ts: list = []
                for v in list(args) + list(kwargs.values()):
                    _tensors(v, ts)
                ts = [t for t in ts if t.layout is torch.strided]
                f = features([tuple(t.shape) for t in ts], [str(t.dtype).replace("torch.", "") for t in ts],
                             [tuple(t.stride()) for t in ts])
                name = _overload(func)
                s = seen.setdefault(name, {"calls": 0, "rank": 0, "empty": False, "mixed_float": False,
                                           "noncontig": False, "trailing_one": False})
                s["calls"] += 1
                s["rank"] = max(s["rank"], f["rank"])
                for k in ("empty", "mixed_float", "noncontig", "trailing_one"):
                    s[k] = s[k] or f[k]
                if name.split(".")[0].lstrip("_") in names or name.split(".")[0] in names:
                    primary.add(name)
            return func(*args, **kwargs)

    if torch.float32 not in op.supported_dtypes("cpu"):
        return
    try:
        it = op.sample_inputs("cpu", torch.float32, requires_grad=grad)
        for i, sample in enumerate(it):
            if i >= samples:
                break
            try:
                with Rec():
                    out = op(sample.input, *sample.args, **sample.kwargs)
                    if grad:
                        outs = [o for o in (out if isinstance(out, (list, tuple)) else [out])
                                if isinstance(o, torch.Tensor) and o.requires_grad]
                        ins: list = []
                        _tensors(sample.input, ins)
                        for v in list(sample.args) + list(sample.kwargs.values()):
                            _tensors(v, ins)
                        ins = [t for t in ins if t.requires_grad]
                        if outs and ins:
                            torch.autograd.grad(outs, ins, [torch.randn_like(o) for o in outs], allow_unused=True)
            except Exception:  # a sample that fails on CPU still recorded what it dispatched
                continue
    except Exception:
        return


def records(op_keys: dict[str, set[str]], lists: dict[str, dict[str, set[str]]]) -> dict[str, list[dict]]:
    """Families with a record of MPS aborts or wrong results -> the records (id, report, source; ``releases``: for a
    common_mps.py entry, the releases whose file lists it). ``lists``: release -> list name -> OpInfo keys."""
    out: dict[str, list[dict]] = {}
    for table, key in (("mps_wrong_results", "advisories"), ("mps_unverified_regimes", "regimes")):
        for e in curated.load(table)[key]:
            ops = e["op"] if isinstance(e["op"], list) else [e["op"]]
            for fam in sorted({family(o) for o in ops}):
                out.setdefault(fam, []).append({"id": e["id"], "report": e["report"], "source": e["source"],
                                                "from": f"{table}.yaml"})
    for rule in curated.load("mps_shape_rules")["rules"]:
        if rule.get("effect") == "crash":
            fam = family(rule["op"])
            out.setdefault(fam, []).append({"id": f"crash:{rule['op']}", "report": "", "source": rule["source"],
                                            "from": "mps_shape_rules.yaml"})
    listed: dict[tuple[str, str], list[str]] = {}
    for release in sorted(lists, key=_vkey):
        for lst in RECORD_LISTS:
            for key in lists[release].get(lst, ()):
                listed.setdefault((lst, key), []).append(release)
    for (lst, key), releases in sorted(listed.items()):
        cm = f"https://github.com/pytorch/pytorch/blob/v{releases[-1]}/torch/testing/_internal/common_mps.py"
        for fam in sorted({family(o) for o in op_keys.get(key, ())}):
            out.setdefault(fam, []).append({"id": f"{lst}:{key}", "report": "", "source": cm,
                                            "from": "common_mps.py", "releases": releases})
    return {k: v for k, v in sorted(out.items())}


def _vkey(release: str) -> tuple[int, ...]:
    return tuple(int(p) for p in release.split("."))


def release_lists(releases: list[str], cache: Path, installed: tuple[str, str]) -> dict[str, dict[str, set[str]]]:
    """release -> list name -> OpInfo keys, for every release of ``releases`` from 2.8.0 on (the wheels that carry
    common_mps.py), each read in its own wheel's file (``fetch.fetch`` into ``cache``); the installed release's
    file is read where it is installed (``installed``: release, text)."""
    from mpsready.ops.build import fetch

    out: dict[str, dict[str, set[str]]] = {}
    for release in releases:
        if _vkey(release)[:2] < FIRST_COMMON_MPS:
            continue
        if release == installed[0]:
            text = installed[1]
        else:
            fetch.fetch(release, cache)
            path = cache / release / "torch" / "testing" / "_internal" / "common_mps.py"
            if not path.exists():
                continue
            text = path.read_text(encoding="utf-8")
        out[release] = {k: set(v) for k, v in common_mps_entries(text).items()}
    return out


def build(samples: int, releases: list[str] | None = None, cache: Path = CACHE) -> dict[str, Any]:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    release = torch.__version__.split("+")[0]
    import torch.testing._internal.common_mps as cm_mod

    text = Path(cm_mod.__file__).read_text(encoding="utf-8")
    per_release = release_lists(releases if releases is not None else [release], cache, (release, text))
    # backward not compared in float32 (the envelope's dtype): its calls are not in the envelope
    no_grad = set().union(*(common_mps_lists(text, True).get(n, set()) for n in GRAD_EXCLUDED))
    seen: dict[str, dict[str, Any]] = {}
    op_keys: dict[str, set[str]] = {}
    for op in op_db:
        key = op.name + op.variant_test_name
        primary: set[str] = set()
        trace(op, samples, False, seen, primary)
        if op.supports_autograd and key not in no_grad:
            trace(op, samples, True, seen, primary)
        op_keys[key] = primary
    listed = {k for rel in per_release.values() for keys in rel.values() for k in keys}
    # a key whose samples dispatch no overload named like it (conv2d reaches aten::convolution, argsort sort): the
    # builder's OpInfo map (curated/opinfo_map.json with opinfo_overrides.yaml, ops/build/common_mps.py)
    from mpsready.ops.build.common_mps import load_opinfo_map

    mapped = load_opinfo_map()[0]
    for key in listed:
        if not op_keys.get(key) and mapped.get(key):
            op_keys[key] = set(mapped[key])
    recs = records(op_keys, per_release)
    gated = sorted(o for o in seen if family(o) in recs)
    cov = {"opinfos": len(op_db), "overloads_exercised": len(seen), "families_with_a_record": len(recs),
           "overloads_gated": len(gated), "common_mps_releases": sorted(per_release, key=_vkey),
           "common_mps_keys_unmapped": sorted(k for k in listed if not op_keys.get(k)),
           "gated_outside_per_feature": {k: sum(1 for o in gated if not seen[o][k])
                                         for k in ("empty", "mixed_float", "noncontig", "trailing_one")}}
    return {"schema": {"name": "mpsready.ops-envelope", "version": 1}, "torch": release,
            "how": (f"OpInfo sample_inputs of torch {release} (float32, at most {samples} per OpInfo, forward and "
                    "backward with random output gradients as test_mps.py's TestConsistency) traced on CPU under a "
                    "TorchDispatchMode; records from the curated tables and the failure lists of common_mps.py of "
                    f"{', '.join(sorted(per_release, key=_vkey))} (each read in its release's file). Envelope read "
                    f"in {release}'s files; every other release inferred."),
            "ops": {k: seen[k] for k in sorted(seen)}, "records": recs, "coverage": cov}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mpsready.ops.build --envelope", description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=12, help="samples per OpInfo (default 12)")
    ap.add_argument("-o", "--out", type=Path, default=OUT)
    ap.add_argument("--releases", nargs="*", default=None,
                    help="releases whose common_mps.py lists are records (default: every shipped release from 2.8)")
    ap.add_argument("--cache", type=Path, default=CACHE, help="wheel members cache (ops/build/fetch.py)")
    args = ap.parse_args(argv)
    if args.releases is None:
        from mpsready.ops.api import shipped_versions

        args.releases = shipped_versions()
    doc = build(args.samples, args.releases, args.cache)
    args.out.write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    cov = doc["coverage"]
    print(f"envelope of torch {doc['torch']}: {cov['opinfos']} OpInfos, {cov['overloads_exercised']} aten overloads "
          f"exercised, {cov['families_with_a_record']} families with a record, {cov['overloads_gated']} overloads "
          f"gated; gated overloads never exercised with: "
          + ", ".join(f"{k} {v}" for k, v in cov["gated_outside_per_feature"].items()))
    return 0

"""Map common_mps.py OpInfo keys to aten overloads by running OpInfo samples under a TorchDispatchMode.

Maintainers only (needs torch; research note §3 "Mapping OpInfo keys"):

    PYTHONPATH=src python -m mpsready.ops.build.opinfo_map [--cache DIR] [-o .../curated/opinfo_map.json]

For each key with exceptions in any cached release's common_mps.py, find the OpInfo in the *installed*
torch's ``op_db`` (key = ``op.name + op.variant_test_name``), run up to a few ``op.sample_inputs("cpu",
dtype)`` on CPU and record the top-level aten overloads dispatched. The "primary" overloads are those whose
name contains the OpInfo's ``aten_name`` (or its last name component); failing that, every recorded overload
that is not view/alloc/copy plumbing. Keys not in op_db (stale, or in another DB) are listed as unmapped;
``opinfo_overrides.yaml`` corrects or completes the result by hand.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from mpsready.ops.build import common_mps

# Overloads that every sample dispatches and that say nothing about the op under test.
PLUMBING = {
    "view", "_unsafe_view", "reshape", "expand", "clone", "copy_", "empty.memory_format", "empty_strided",
    "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "fill_.Scalar", "t",
    "transpose.int", "permute", "squeeze.dim", "squeeze.dims", "squeeze", "unsqueeze", "contiguous", "detach",
    "alias", "as_strided", "select.int", "slice.Tensor", "_to_copy", "lift_fresh", "resize_", "_reshape_alias",
    "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full", "zero_", "split.Tensor",
    "split_with_sizes", "unbind.int", "stack", "cat", "_local_scalar_dense", "scalar_tensor", "arange.start",
    "arange.start_step", "arange", "item", "is_nonzero", "eq.Scalar", "ne.Scalar", "empty_permuted",
    "unsqueeze_", "squeeze_.dim", "to.dtype", "detach_", "set_.source_Storage_storage_offset", "randn",
    "rand", "randint.low", "normal_", "uniform_", "_unsafe_index.Tensor", "diagonal", "expand_as",
}


def _overload(func) -> str:
    name = func._schema.name.split("::", 1)[1]
    return name if func._overloadname == "default" else f"{name}.{func._overloadname}"


def trace_opinfo(op, dtypes: list[str], samples: int = 3) -> Counter:
    """Top-level aten overloads dispatched by a few CPU samples of ``op``."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: Counter = Counter()

    class Rec(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.namespace == "aten":
                seen[_overload(func)] += 1
            return func(*args, **(kwargs or {}))

    wanted = [getattr(torch, d) for d in dtypes if d != common_mps.ALL_DTYPES and hasattr(torch, d)]
    supported = op.supported_dtypes("cpu")
    order = [d for d in wanted if d in supported] + [torch.float32, torch.int64, torch.bool, torch.complex64]
    for dtype in order:
        if dtype not in supported:
            continue
        try:
            for i, sample in enumerate(op.sample_inputs("cpu", dtype, requires_grad=False)):
                if i >= samples:
                    break
                with Rec():
                    try:
                        op(sample.input, *sample.args, **sample.kwargs)
                    except Exception:  # a sample that fails on CPU still recorded what it dispatched
                        pass
        except Exception:
            continue
        if seen:
            break
    return seen


def by_name(op, seen: Counter) -> list[str]:
    """Recorded overloads whose name is the OpInfo's ``aten_name`` (or its last name component), sorted."""
    names = {getattr(op, "aten_name", None) or "", op.name.split(".")[-1], op.name.replace(".", "_")}
    names = {n for n in names if n}
    return sorted(o for o in seen if o.split(".")[0] in names or o.split(".")[0].lstrip("_") in names)


def primary(op, seen: Counter) -> list[str]:
    """The overloads that stand for the op (see module doc), sorted."""
    return by_name(op, seen) or sorted(o for o in seen if o not in PLUMBING)


def complex_candidates() -> dict[str, list[str]]:
    """For every OpInfo whose CPU dtypes include complex64: the overloads its complex64 samples dispatch,
    matched by name only (no plumbing fallback), so that the complex allow-list of common_mps.py
    (``SUPPORTED_COMPLEX_OPS``) can be applied per overload without attributing gaps to generic ops."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    out = {}
    for op in op_db:
        if torch.complex64 not in op.supported_dtypes("cpu"):
            continue
        ops = by_name(op, trace_opinfo(op, ["complex64"]))
        if ops:
            out[op.name + op.variant_test_name] = ops
    return out


def build_map(keys: dict[str, set[str]]) -> dict:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    by_key = {op.name + op.variant_test_name: op for op in op_db}
    out, unmapped, direct = {}, [], []
    for key in sorted(keys):
        op = by_key.get(key)
        if op is None:
            unmapped.append(key)
            continue
        seen = trace_opinfo(op, sorted(keys[key]))
        named = by_name(op, seen)
        ops = named or primary(op, seen)
        if ops:
            out[key] = ops
            # "direct": the OpInfo *is* the op (matched by name, no variant, not a masked.* wrapper), so its
            # dtype gaps are the op's; other keys only show that some calls of the op fail
            if named and not op.variant_test_name and not op.name.startswith("masked."):
                direct.append(key)
        else:
            unmapped.append(key)
    return {"generated_by": "python -m mpsready.ops.build.opinfo_map", "torch": torch.__version__,
            "method": "OpInfo sample_inputs on CPU under TorchDispatchMode (research note §3)",
            "map": out, "direct": direct, "unmapped": unmapped}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path("/tmp/mpsready-torch-files"))
    ap.add_argument("-o", "--out", type=Path,
                    default=Path(__file__).resolve().parents[1] / "data" / "curated" / "opinfo_map.json")
    args = ap.parse_args(argv)
    keys: dict[str, set[str]] = {}
    for folder in sorted(args.cache.iterdir()):
        path = folder / common_mps.COMMON_MPS
        if not path.exists():
            continue
        per_key, _, _ = common_mps.key_exceptions(path.read_text(encoding="utf-8"), "13.0")
        for key, exc in per_key.items():
            keys.setdefault(key, set()).update(exc.dx)
    doc = build_map(keys)
    doc["complex_candidates"] = complex_candidates()
    args.out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"{len(doc['map'])} keys mapped, {len(doc['unmapped'])} unmapped: {', '.join(doc['unmapped'])}; "
          f"{len(doc['complex_candidates'])} complex64 OpInfos mapped by name")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

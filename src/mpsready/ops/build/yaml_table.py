"""Classify every overload of one release's ``native_functions.yaml`` for MPS and CUDA.

Rules (research note §1.1, checked there against torchgen's own parser for 2.3.1-2.13.0):

* op key = text before ``(`` in ``func:``; ``dispatch:`` keys are comma lists;
* ``structured_delegate: foo.out`` gives a kernel iff ``foo.out`` has one (functional/in-place variants);
* ``ufunc_inner_loop`` makes CPU and CUDA kernels only (``UFUNC_DISPATCH_KEYS`` in ``torchgen/model.py``);
* no ``dispatch`` and no delegate = implicit CompositeImplicitAutograd (CIA); an ``MPS:`` key on a CIA op
  overrides the decomposition on MPS (``linear``, ``max_pool2d``, ...);
* CompositeExplicitAutograd(NonFunctional) = backend-agnostic C++ kernel that calls other ops;
* ``autogen:`` variants are generated wrappers around their base op; torchgen skips autogen for non-``core``
  CIA ops.

Classes produced (field ``cls``): ``explicit``, ``delegate``, ``composite_explicit``, ``composite_implicit``,
``autogen``, ``none``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

YAML_MEMBER = "torchgen/packaged/ATen/native/native_functions.yaml"
CEA_KEYS = ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")
SPARSE_MPS_KEYS = ("SparseMPS", "SparseCsrMPS")
DEVICE_CLASSES = ("explicit", "delegate")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class YamlOp:
    """One overload as classified from the yaml (``name`` without namespace, e.g. ``add.Tensor``)."""

    name: str
    mps: str  # class for MPS (see module doc)
    cuda: str  # class for CUDA
    via: str | None  # the delegate (``add.out``) or the autogen base op
    cea_key: str | None  # which composite-explicit key, when composite_explicit
    sparse_mps: bool
    core: bool
    device_keys: tuple[str, ...] = field(default=())  # dispatch keys of the op itself
    delegate: str | None = None  # ``structured_delegate`` of the yaml entry (``index_copy.out``), whatever its class


@dataclass
class _Raw:
    dispatch: dict
    delegate: str | None
    ufunc: bool
    autogen: list
    tags: list


def _parse(entries: list) -> dict[str, _Raw]:
    raw: dict[str, _Raw] = {}
    for entry in entries:
        if not isinstance(entry, dict) or "func" not in entry:
            continue
        disp: dict[str, str] = {}
        for keys, kernel in (entry.get("dispatch") or {}).items():
            for key in str(keys).split(","):
                disp[key.strip()] = kernel
        tags = entry.get("tags") or []
        if isinstance(tags, str):
            tags = [t.strip() for t in tags.split(",")]
        raw[entry["func"].split("(", 1)[0].strip()] = _Raw(
            dispatch=disp,
            delegate=entry.get("structured_delegate"),
            ufunc="ufunc_inner_loop" in entry,
            autogen=[x.strip() for x in str(entry.get("autogen", "") or "").split(",") if x.strip()],
            tags=list(tags),
        )
    return raw


def _status(raw: dict[str, _Raw], name: str, key: str) -> tuple[str, str | None, str | None]:
    r = raw[name]
    d = r.dispatch
    if key in d:
        return "explicit", None, None
    if key == "CUDA" and r.ufunc:  # ufunc loops make CPU/CUDA kernels only
        return "explicit", None, None
    dr = raw.get(r.delegate) if r.delegate else None
    if dr is not None and (key in dr.dispatch or (key == "CUDA" and dr.ufunc)):
        return "delegate", r.delegate, None
    for cea in CEA_KEYS:
        if cea in d:
            return "composite_explicit", None, cea
    if "CompositeImplicitAutograd" in d or (not d and not r.delegate):
        return "composite_implicit", None, None
    return "none", None, None


def classify_text(text: str) -> dict[str, YamlOp]:
    """Classify the yaml text; returns ``{overload name: YamlOp}`` in yaml order, autogen variants last."""
    raw = _parse(yaml.load(text, Loader=_Loader))
    ops: dict[str, YamlOp] = {}
    for name, r in raw.items():
        mps, via, cea = _status(raw, name, "MPS")
        cuda = _status(raw, name, "CUDA")[0]
        ops[name] = YamlOp(
            name=name, mps=mps, cuda=cuda, via=via, cea_key=cea,
            sparse_mps=any(k in r.dispatch for k in SPARSE_MPS_KEYS), core="core" in r.tags,
            device_keys=tuple(sorted(r.dispatch)), delegate=r.delegate,
        )
    for name, r in raw.items():  # generated variants (torchgen rule: no autogen for non-core CIA ops)
        if ops[name].mps == "composite_implicit" and "core" not in r.tags:
            continue
        for gen in r.autogen:
            if gen not in ops:
                ops[gen] = YamlOp(name=gen, mps="autogen", cuda="autogen", via=name, cea_key=None,
                                  sparse_mps=False, core=False)
    return ops

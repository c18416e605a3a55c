"""``mpsready replay A B [--layer NAME]``: re-run one layer alone from recorded inputs: an op's error, or carried in?

The layer is the first diverging activation of ``compare A B`` (or ``--layer``), at the step of that
divergence (or ``--step``). Record A must hold the layer's saved inputs (``mpsready record --save-inputs
LAYER``: ``layer_inputs/LAYER/step-NNNN.safetensors``, :mod:`mpsready.record.numerics_hook`); record B's own
saved inputs are used when present. Files are read with ``safetensors`` only; nothing is unpickled.

The module is rebuilt from the record's ENTRY (the entry function is called; its ``model`` is taken), the
recorded parameters and buffers are loaded into the named submodule, and it runs alone (``torch.no_grad``, in
the mode the entry left it) on:

* a float64 CPU copy (the reference ``R``), from A's inputs and, when B saved them, from B's;
* each device of this machine (``cpu``; ``cuda``/``mps`` when available) in the recorded dtypes, from A's
  inputs, with a dispatch mode that keeps every aten call's inputs and result; each call is then re-run
  alone on float64 CPU copies of its own inputs, and its error is that of its result against that re-run.

Errors are relative L2 norms, ``||x - y|| / ||y||``. ``divergence`` = err(out_B, out_A) (B's saved output,
or B's raw activation with ``--save-tensors``); per side, the layer's own error err(out_side, R(in_side)) from
its recorded output; per device here, err(out_device, R(in_A)); ``inputs`` = err(R(in_B), R(in_A)) when B
saved its inputs. Verdict:

* ``op`` when the largest of the layer's own errors (A's, B's, or a device's here) is at least
  :data:`REPRODUCE` (1/2) of the divergence: the layer alone, on the same inputs, makes it. The op named is
  the aten call with the largest error in the per-op re-run on the device that reproduces it best here
  (none named when no device here reproduces it: the device that does is not on this machine);
* ``accumulated`` otherwise: the divergence came with the inputs (NUM304);
* ``none`` when the recorded outputs do not differ.
"""

from __future__ import annotations

import copy
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpsready.errors import UsageError
from mpsready.findings import Basis, Finding, Location
from mpsready.record.numerics_hook import layer_file
from mpsready.numerics.rules import NUM303, NUM304

REPRODUCE = 0.5
TOP_OPS = 5


@dataclass
class OpError:
    op: str
    index: int  # position in the layer's calls on that device
    dtype: str
    error: float

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "index": self.index, "dtype": self.dtype, "error": _num(self.error)}


@dataclass
class DeviceRun:
    device: str
    error: float  # the layer's output here against the float64 reference, same inputs (A's)
    ops: list[OpError] = field(default_factory=list)  # largest errors first
    skipped: list[str] = field(default_factory=list)  # ops the float64 re-run refused

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "error": _num(self.error), "ops": [o.to_dict() for o in self.ops[:TOP_OPS]],
                "skipped": self.skipped[:10]}


@dataclass
class ReplayResult:
    """What ``mpsready replay`` found (module docstring); ``to_dict()`` is the JSON output."""

    layer: str
    module_type: str | None
    step: int
    a: str
    b: str
    divergence: float
    err_a: float
    err_b: float | None
    inputs: float | None
    devices: list[DeviceRun]
    verdict: str  # "op" | "accumulated" | "none"
    op: str | None
    reproduced_on: str | None
    note: str

    @property
    def findings(self) -> list[Finding]:
        if self.verdict == "none":
            return []
        rule = NUM303 if self.verdict == "op" else NUM304
        msg = f"layer {self.layer}" + (f" ({self.module_type})" if self.module_type else "") + f", step {self.step}: "
        msg += self.note
        return [Finding(code=rule.code, severity=rule.severity, message=msg,
                        location=Location(operator=self.op, stage="forward"), basis=Basis.OBSERVED, fix=rule.fix,
                        source=rule.source, evidence=self._facts())]

    def _facts(self) -> dict[str, Any]:
        return {"layer": self.layer, "module_type": self.module_type, "step": self.step, "a": self.a, "b": self.b,
                "divergence": _num(self.divergence), "err_a": _num(self.err_a), "err_b": _num(self.err_b),
                "inputs": _num(self.inputs), "devices": [d.to_dict() for d in self.devices],
                "verdict": self.verdict, "op": self.op, "reproduced_on": self.reproduced_on, "note": self.note}

    def to_dict(self) -> dict[str, Any]:
        """The ``mpsready.replay`` v1 document: the fields above and ``findings`` (NUM303 or NUM304)."""
        from mpsready.schema import envelope

        return envelope("mpsready.replay", 1, basis="observed", **self._facts(),
                        findings=[f.to_dict() for f in self.findings])


def _num(x: float | None) -> float | str | None:
    """JSON has no Infinity: an infinite error is written ``"inf"``."""
    return "inf" if x is not None and math.isinf(x) else x


# ------------------------------------------------------------------------------------ helpers
def rel(x: Any, ref: Any) -> float:
    """``||x - ref|| / ||ref||`` in float64 on the CPU (``inf`` when x is non-finite where ref is not)."""
    import torch

    x = x.detach().to("cpu", torch.float64)
    ref = ref.detach().to("cpu", torch.float64)
    if x.shape != ref.shape:
        raise UsageError(f"replay: shapes differ ({list(x.shape)} vs {list(ref.shape)})")
    d = torch.linalg.vector_norm(x - ref).item()
    n = torch.linalg.vector_norm(ref).item()
    if math.isnan(d):
        return math.inf
    return d / n if n > 0 else (0.0 if d == 0 else math.inf)


def _load(path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    from safetensors import safe_open
    from safetensors.torch import load_file

    try:
        with safe_open(str(path), framework="pt") as fh:
            meta = fh.metadata() or {}
        return load_file(str(path)), meta
    except Exception as exc:  # noqa: BLE001 (a truncated or foreign file: safetensors raises its own error types)
        raise UsageError(f"replay: cannot read {path}: {exc}") from None


def _outputs(t: dict[str, Any]) -> Any:
    if "output" in t:
        return t["output"]
    outs = sorted(k for k in t if k.startswith("output."))
    if not outs:
        raise UsageError("replay: the saved layer file has no output")
    return t[outs[0]]  # the first tensor output


def _args(t: dict[str, Any], meta: dict[str, str]) -> tuple[list[Any], dict[str, Any]]:
    layout = json.loads(meta.get("args", "[]"))
    args = [t[f"input.{i}"] if v == "t" else v for i, v in enumerate(layout)]
    kwargs = {k[len("kwarg."):]: v for k, v in t.items() if k.startswith("kwarg.")}
    return args, kwargs


def _to(x: Any, device: str, f64: bool) -> Any:
    import torch

    if isinstance(x, torch.Tensor):
        x = x.to(device)
        return x.to(torch.float64) if f64 and x.is_floating_point() else x
    if isinstance(x, (list, tuple)):
        return type(x)(_to(v, device, f64) for v in x)
    if isinstance(x, dict):
        return {k: _to(v, device, f64) for k, v in x.items()}
    if f64 and isinstance(x, torch.dtype) and x.is_floating_point:
        return torch.float64
    if isinstance(x, torch.device):
        return torch.device(device)
    return x


def _build_module(manifest: dict[str, Any], layer: str, entry: str | None, cwd: str | None,
                  state: dict[str, Any]) -> Any:
    from mpsready.step.contract import Step
    from mpsready.step.entry import load_entry

    spec = entry or manifest.get("entry")
    if not spec:
        raise UsageError("replay: record A names no ENTRY (give --entry)")
    if not isinstance(spec, str):
        raise UsageError("replay: record A's entry is not a string (give --entry)")
    if entry is None:  # named by the record, which is data: shown, and run only from the folder the user names
        where = entry_inside(spec, Path(cwd or os.getcwd()))
        sys.stderr.write(f"replay: building the model with record A's entry {_shown(spec)} ({where})\n")
    try:
        e = load_entry(spec, cwd=cwd)
        step = Step.coerce(e.function())
    except UsageError:
        raise
    except Exception as exc:  # the entry's own error (its import or its function): exit 2 with its message
        text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
        raise UsageError(f"replay: the entry {_shown(spec)} raised {type(exc).__name__}"
                         + (f": {text}" if text else "")) from None
    model = step.model
    mods = dict(model.named_modules()) if model is not None else {}
    if layer not in mods:
        raise UsageError(f"replay: the entry's model has no module {layer!r}")
    mod = mods[layer]
    _missing, unexpected = mod.load_state_dict(state, strict=False)
    if unexpected:
        raise UsageError(f"replay: the saved state of {layer!r} does not fit the entry's module "
                         f"(unexpected: {', '.join(unexpected[:5])})")
    return mod


def _shown(text: str) -> str:
    """``text`` for one line of output: control and invisible characters escaped."""
    from mpsready.escape import visible

    return visible(text[:300])


def entry_inside(spec: str, base: Path) -> str:
    """The file ``spec`` (``path/file.py:fn`` or ``package.module:fn``) names inside the folder ``base``, found
    without importing anything; :class:`~mpsready.errors.UsageError` when it is not one there (a module
    installed elsewhere, a file outside ``base``): a record that travelled between machines must not choose
    the code replay runs."""
    from mpsready.step.entry import split_spec

    target, _fn = split_spec(spec)
    real = base.resolve()
    if target.endswith(".py") or "/" in target or os.sep in target:
        candidates = [real / target]
    else:
        parts = target.split(".")
        if not all(part.isidentifier() for part in parts):
            candidates = []
        else:
            candidates = [real.joinpath(*parts).with_suffix(".py"), real.joinpath(*parts, "__init__.py")]
    for c in candidates:
        r = c.resolve()
        if r.is_file() and real in r.parents:
            return str(r)
    raise UsageError(f"replay: record A's entry {_shown(spec)} is not a file inside {base} (a record is data: it "
                     "must not choose the code replay runs); run replay from the project's folder (--project DIR), "
                     f"or give --entry {_shown(spec)} to run it anyway")


def _run(mod: Any, args: list[Any], kwargs: dict[str, Any], device: str, f64: bool) -> Any:
    import torch

    m = copy.deepcopy(mod).to(device)
    if f64:
        m = m.double()
    with torch.no_grad():
        out = m(*_to(args, device, f64), **_to(kwargs, device, f64))
    if isinstance(out, (list, tuple)):
        out = next(o for o in out if isinstance(o, torch.Tensor))
    return out


def _per_op(mod: Any, args: list[Any], kwargs: dict[str, Any], device: str) -> tuple[Any, list[OpError], list[str]]:
    """Run ``mod`` on ``device`` keeping every call; re-run each call alone in float64 on the CPU."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from mpsready.record.mps import op_name

    calls: list[tuple[Any, Any, Any, Any]] = []

    def snap(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return x.detach().clone()
        if isinstance(x, (list, tuple)):
            return type(x)(snap(v) for v in x)
        return x

    class Keep(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, a=(), k=None):
            k = k or {}
            saved = (snap(a), snap(k))
            out = func(*a, **k)
            calls.append((func, saved[0], saved[1], snap(out)))
            return out

    m = copy.deepcopy(mod).to(device)
    with torch.no_grad(), Keep():
        out = m(*_to(args, device, False), **_to(kwargs, device, False))
    if isinstance(out, (list, tuple)):
        out = next(o for o in out if isinstance(o, torch.Tensor))
    errors: list[OpError] = []
    skipped: list[str] = []
    for i, (func, a, k, o) in enumerate(calls):
        res = o if isinstance(o, torch.Tensor) else next((t for t in o if isinstance(t, torch.Tensor)), None) \
            if isinstance(o, (list, tuple)) else None
        if res is None or not res.is_floating_point() or res.numel() == 0:
            continue
        name = op_name(func)
        try:
            ref = func(*_to(a, "cpu", True), **_to(k, "cpu", True))
        except Exception:  # noqa: BLE001 (an op refusing float64 or CPU arguments: listed, not fatal)
            skipped.append(name)
            continue
        if isinstance(ref, (list, tuple)):
            ref = next((t for t in ref if isinstance(t, torch.Tensor)), None)
        if not isinstance(ref, torch.Tensor) or ref.shape != res.shape:
            skipped.append(name)
            continue
        errors.append(OpError(name, i, str(res.dtype).replace("torch.", ""), rel(res, ref)))
    errors.sort(key=lambda e: (-e.error, e.index))
    return out, errors, skipped


def local_devices() -> list[str]:
    """``cpu``, plus ``cuda`` and ``mps`` when this machine has them."""
    import torch

    out = ["cpu"]
    if torch.cuda.is_available():
        out.append("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        out.append("mps")
    return out


def _first_layer(ra: Any, rb: Any) -> tuple[str, int]:
    from mpsready.compare.engine import compare_records

    comp = compare_records(ra, rb)
    first = comp.first_forward
    if first is None:
        raise UsageError("replay: A and B do not diverge in the forward pass (give --layer)")
    if first.kind != "activation":
        raise UsageError(f"replay: the first divergence is {first.key}, not a layer's output (give --layer)")
    return first.name.split("#")[0].split("/")[0], first.step


def _b_output(rb: Any, layer: str, step: int) -> Any:
    """B's output of ``layer`` at ``step``: its saved layer file, else its raw tensors (``--save-tensors``)."""
    from safetensors import safe_open

    from mpsready.record.layout import raw_file

    p = Path(rb.path) / raw_file(step)
    key = f"activation:{layer}#0"
    if p.is_file():
        with safe_open(str(p), framework="pt") as fh:
            if key in fh.keys():  # noqa: SIM118 (safe_open has keys(), not __contains__)
                return fh.get_tensor(key)
    return None


def replay(a: str | Path, b: str | Path, layer: str | None = None, step: int | None = None,
           entry: str | None = None, cwd: str | None = None, devices: list[str] | None = None) -> ReplayResult:
    """Replay ``layer`` (default: the first diverging one) of records ``a`` and ``b`` (module docstring).

    ``entry``/``cwd``: the ENTRY that builds the model (default: record A's, resolved against ``cwd``).
    ``devices``: where to run it here (default :func:`local_devices`). Raises
    :class:`~mpsready.errors.UsageError` when A has no saved inputs for the layer and step (the message gives
    the ``record --save-inputs`` command), B has neither saved inputs nor a raw activation for it, or the
    entry's model has no such module.
    """
    from mpsready.record.layout import RecordError, RunRecord

    try:
        ra, rb = RunRecord.open(a), RunRecord.open(b)
    except RecordError as exc:
        raise UsageError(f"replay: {exc}") from None
    if layer is None:
        layer, first_step = _first_layer(ra, rb)
        step = first_step if step is None else step
    step = 0 if step is None else step
    fa = Path(ra.path) / layer_file(layer, step)
    if not fa.is_file():
        raise UsageError(f"replay: record A ({a}) has no saved inputs of layer {layer!r} at step {step}; record it "
                         f"with `mpsready record ... --save-inputs {layer}`")
    ta, meta = _load(fa)
    args_a, kwargs_a = _args(ta, meta)
    out_a = _outputs(ta)
    state = {k[len("state."):]: v for k, v in ta.items() if k.startswith("state.")}
    fb = Path(rb.path) / layer_file(layer, step)
    tb = meta_b = None
    if fb.is_file():
        tb, meta_b = _load(fb)
        out_b = _outputs(tb)
    else:
        out_b = _b_output(rb, layer, step)
    if out_b is None:
        raise UsageError(f"replay: record B ({b}) has neither saved inputs (--save-inputs {layer}) nor a raw "
                         f"activation (--save-tensors) of layer {layer!r} at step {step}")
    mod = _build_module(ra.manifest, layer, entry, cwd, state)
    ref_a = _run(mod, args_a, kwargs_a, "cpu", True)
    divergence = rel(out_b, out_a)
    err_a = rel(out_a, ref_a)
    err_b = inputs = None
    if tb is not None and meta_b is not None:  # loaded together
        args_b, kwargs_b = _args(tb, meta_b)
        state_b = {k[len("state."):]: v for k, v in tb.items() if k.startswith("state.")}
        mod_b = copy.deepcopy(mod)
        mod_b.load_state_dict(state_b, strict=False)
        ref_b = _run(mod_b, args_b, kwargs_b, "cpu", True)
        err_b = rel(out_b, ref_b)
        inputs = rel(ref_b, ref_a)
    runs = []
    for dev in devices or local_devices():
        out_d, ops, skipped = _per_op(mod, args_a, kwargs_a, dev)
        runs.append(DeviceRun(dev, rel(out_d, ref_a), ops, skipped))
    best = max(runs, key=lambda r: r.error)  # runs holds the CPU at least (local_devices)
    own = max([err_a] + ([err_b] if err_b is not None else []) + [r.error for r in runs])
    verdict, op, where, note = _verdict(divergence, own, err_a, err_b, inputs, best,
                                        ra.manifest.get("device"), rb.manifest.get("device"))
    return ReplayResult(layer=layer, module_type=meta.get("module_type") or None, step=step, a=str(a), b=str(b),
                        divergence=divergence, err_a=err_a, err_b=err_b, inputs=inputs, devices=runs,
                        verdict=verdict, op=op, reproduced_on=where, note=note)


def _verdict(divergence: float, own: float, err_a: float, err_b: float | None, inputs: float | None,
             best: DeviceRun, da: Any, db: Any) -> tuple[str, str | None, str | None, str]:
    """(verdict, op, device that reproduced it, note) of a replay: "none", "op" or "accumulated"."""
    if divergence == 0:
        verdict, op, where = "none", None, None
        note = "the recorded outputs of A and B are identical"
    elif own >= REPRODUCE * divergence:
        verdict = "op"
        here = best.error >= REPRODUCE * divergence
        op = best.ops[0].op if here and best.ops else None
        where = best.device if here else None
        who = ("B's recorded output" if err_b is not None and err_b == own else
               "A's recorded output" if err_a == own else f"the run on {best.device} here")
        note = (f"alone, on the same inputs, the layer reproduces {own / divergence:.2f} of the recorded divergence "
                f"{divergence:.3g} ({who}: error {own:.3g} against float64): an op difference")
        if op is not None:
            note += f"; largest op error on {where}: {op} {best.ops[0].error:.3g}"
        else:
            note += (f"; no device here reproduces it (best: {best.device} {best.error:.3g}), so the op inside is "
                     f"not named: replay on the device of {'B (' + str(db) + ')' if who.startswith('B') else 'A (' + str(da) + ')'}")
    else:
        verdict, op, where = "accumulated", None, None
        note = (f"alone, on the same inputs, the layer makes only {own / divergence:.2g} of the recorded divergence "
                f"{divergence:.3g} (largest own error {own:.3g}): the error accumulated upstream"
                + (f"; its inputs differ by {inputs:.3g} between A and B" if inputs is not None else ""))
    return verdict, op, where, note

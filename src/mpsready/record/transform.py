"""Changes applied to the entry's step before it runs: ``--dtype float64`` and ``--synthetic-inputs``.

* float64 reference: the model is cast with ``Module.double()`` (parameters converted in place,
  so an optimizer built on them stays valid) and every floating input tensor with
  ``Tensor.double()`` (complex ones to complex128); integer and bool tensors are untouched.
* synthetic inputs: the batch is replaced by random tensors with the shapes, dtypes and value
  ranges recorded in a previous run record (``record.json`` ``inputs``), drawn from a CPU
  ``torch.Generator`` seeded with the run's seed, so two devices replay identical inputs.
  Floating tensors are uniform in [min, max]; integer tensors uniform integers in [min, max]
  (so class targets stay valid indices); bool tensors fair coin flips.
"""

from __future__ import annotations

from typing import Any, Mapping

from mpsready.step.contract import Step
from mpsready.step.entry import Entry


def cast_float64(obj: Any) -> Any:
    import torch

    if isinstance(obj, torch.Tensor):
        if obj.is_complex():
            return obj.to(torch.complex128)
        return obj.double() if obj.is_floating_point() else obj
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(cast_float64(x) for x in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(cast_float64(x) for x in obj)
    if isinstance(obj, dict):
        return {k: cast_float64(v) for k, v in obj.items()}
    return obj


_NEUTRAL = {"int": 0, "float": 0.0, "bool": False, "str": "", "bytes": b""}


def synthesize(spec: Mapping[str, Any], generator: Any) -> Any:
    """``(inputs, target)`` built from a recorded ``inputs`` section (module docstring); target may be None."""
    tensors = {t["name"]: t for t in spec["tensors"]}

    def build(node: Mapping[str, Any]) -> Any:
        kind = node["type"]
        if kind == "tensor":
            return _random_tensor(tensors[node["name"]], generator)
        if kind == "dict":
            return {k: build(v) for k, v in node["items"].items()}
        if kind in ("list", "tuple"):
            items = [build(v) for v in node["items"]]
            return items if kind == "list" else tuple(items)
        # records keep a value's type, not its contents (older records kept "value"): replay a neutral one
        if "value" in node:
            return node["value"]
        return _NEUTRAL.get(node.get("value_type") or "")

    inputs = build(spec["structure"]["inputs"])
    target = build(spec["structure"].get("target") or {"type": "value", "value": None})
    # Always an (inputs, target) pair: the runner splits a 2-tuple, so returning a bare tuple of
    # two inputs would be misread as (inputs, target).
    return inputs, target


def _random_tensor(t: Mapping[str, Any], gen: Any) -> Any:
    import torch

    dtype = getattr(torch, t["dtype"])
    shape = tuple(t["shape"])
    lo = t.get("min")
    hi = t.get("max")
    lo = 0.0 if lo is None else lo
    hi = lo if hi is None else hi
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if dtype.is_floating_point or dtype.is_complex:
        u = torch.rand(shape, generator=gen, dtype=torch.float64)
        return (lo + (hi - lo) * u).to(dtype)
    return torch.randint(int(lo), int(hi) + 1, shape, generator=gen, dtype=torch.int64).to(dtype)


def wrap_entry(entry: Entry, *, float64: bool = False, synthetic: Mapping[str, Any] | None = None,
               seed: int = 0) -> Entry:
    """An :class:`Entry` whose step has float64 casts and/or synthetic inputs applied.

    Raises ``TypeError`` (a failure of the ``build`` stage) for a whole-step entry, whose model
    and batch cannot be reached.
    """
    if not float64 and synthetic is None:
        return entry

    def build(device: str = "cpu") -> Step:
        import torch

        step = Step.coerce(entry.call(device))
        if step.whole:
            raise TypeError("--dtype float64 and --synthetic-inputs need an entry that returns the step's pieces "
                            "(model, batch, loss_fn, optimizer), not a whole-step callable")
        if synthetic is not None:
            gen = torch.Generator().manual_seed(seed)
            step.batch = lambda: synthesize(synthetic, gen)
            if step.inference_batch is not None:
                step.inference_batch = synthesize(synthetic, torch.Generator().manual_seed(seed + 1))[0]
        if float64:
            if step.model is not None:
                step.model = step.model.double()
            batch = step.batch
            step.batch = (lambda: cast_float64(batch())) if callable(batch) else cast_float64(batch)
            step.inference_batch = cast_float64(step.inference_batch)
        return step

    return Entry(spec=entry.spec, function=build, root=entry.root, source_file=entry.source_file)

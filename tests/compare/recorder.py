"""A minimal CPU recorder for the compare tests: runs tiny real torch models and writes
run records (format v1) through RecordWriter, with raw tensors via safetensors.

It stands in for ``mpsready record`` (built in parallel) so these tests depend only on
the record *format*. Keys, kinds and orders follow mpsready/record/layout.py.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from safetensors.torch import save_file
from torch import nn

from mpsready.record.layout import RecordWriter, TensorEntry, TensorStats, raw_file


def mlp(dropout: float = 0.0, extra: bool = False) -> nn.Module:
    layers: list[tuple[str, nn.Module]] = [("fc1", nn.Linear(8, 16)), ("act1", nn.ReLU())]
    if dropout:
        layers.append(("drop", nn.Dropout(dropout)))
    layers += [("fc2", nn.Linear(16, 16)), ("act2", nn.Tanh())]
    if extra:
        layers += [("fc3", nn.Linear(16, 16)), ("act3", nn.Tanh())]
    layers.append(("head", nn.Linear(16, 4)))
    return nn.Sequential(OrderedDict(layers))


def stats_of(t: torch.Tensor) -> TensorStats:
    x = t.detach().to(torch.float64).reshape(-1).numpy()
    finite = x[np.isfinite(x)]
    nan, inf = int(np.isnan(x).sum()), int(np.isinf(x).sum())
    if finite.size == 0:
        return TensorStats(x.size, None, None, None, None, None, nan, inf)
    std = float(finite.std(ddof=1)) if finite.size > 1 else 0.0
    return TensorStats(x.size, float(finite.mean()), std, float(finite.min()), float(finite.max()),
                       float(np.sqrt((finite * finite).sum())), nan, inf)


def checksum(t: torch.Tensor) -> str:
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return hashlib.sha256(t.numpy().tobytes()).hexdigest()


def record_run(path: Path, *, device: str = "cpu", dtype: torch.dtype = torch.float32, steps: int = 1,
               model_fn: Callable[[], nn.Module] = mlp, perturb: Callable[[nn.Module], None] | None = None,
               save_tensors: bool = True, rng_seed: int = 1, manifest: dict[str, Any] | None = None,
               drop_keys: tuple[str, ...] = ()) -> Path:
    """Record ``steps`` SGD steps of ``model_fn()`` on the CPU. Weights and data come from
    seed 0 (in float32, then cast to ``dtype``, like a float64 reference run); the forward
    pass runs after ``torch.manual_seed(rng_seed)``, so dropout masks depend on ``rng_seed``."""
    torch.manual_seed(0)
    x = torch.randn(6, 8)  # data first, so a model with an extra layer still sees the same inputs
    y = torch.randint(0, 4, (6,))
    model = model_fn()
    model = model.to(dtype)
    x = x.to(dtype)
    if perturb is not None:
        with torch.no_grad():
            perturb(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    tensors: dict[str, torch.Tensor] = {}
    entries: list[TensorEntry] = []
    counters = {"calls": {}, "order": 0}

    def add(kind: str, name: str, t: torch.Tensor, step: int, order: int, module_type: str | None = None) -> None:
        key = f"{kind}:{name}"
        if key in drop_keys:
            return
        t = t.detach().contiguous()
        entries.append(TensorEntry(key=key, kind=kind, name=name, step=step, order=order, shape=tuple(t.shape),
                                   dtype=str(t.dtype).replace("torch.", ""), stats=stats_of(t),
                                   checksum=checksum(t), module_type=module_type))
        tensors[key] = t.clone()

    step_box = [0]

    def hook(name: str) -> Callable[..., None]:
        def fn(mod: nn.Module, inp: Any, out: torch.Tensor) -> None:
            n = counters["calls"].get(name, 0)
            counters["calls"][name] = n + 1
            add("activation", f"{name}#{n}", out, step_box[0], counters["order"], type(mod).__name__)
            counters["order"] += 1
        return fn

    for name, mod in model.named_modules():
        if name and not list(mod.children()):
            mod.register_forward_hook(hook(name))
    model.train()
    step_metrics = []
    with RecordWriter(path, device=device, entry="tests.compare.recorder:mlp", steps=steps,
                      seed={"value": 0, "how": "torch.manual_seed"}, dtype=str(dtype).replace("torch.", ""),
                      stages=[{"stage": s, "status": "passed", "seconds": 0.0, "steps_run": steps}
                              for s in ("build", "to_device", "data", "forward", "loss", "backward",
                                        "optimizer_step")],
                      raw_tensors=save_tensors, **(manifest or {})) as w:
        for step in range(steps):
            step_box[0] = step
            counters["calls"].clear()
            counters["order"] = 0
            tensors.clear()
            entries.clear()
            add("input", "0", x, step, 0)
            torch.manual_seed(rng_seed + step)
            opt.zero_grad()
            out = model(x)
            add("output", "model", out, step, 0)
            loss = nn.functional.cross_entropy(out, y)
            add("loss", "loss", loss, step, 0)
            loss.backward()
            params = list(model.named_parameters())
            for i, (pname, p) in enumerate(reversed(params)):  # backward order: last layer first
                add("grad", pname, p.grad, step, i)
            opt.step()
            for i, (pname, p) in enumerate(params):
                add("param", pname, p, step, i)
            for e in entries:
                w.add(e)
            if save_tensors:
                (path / raw_file(step)).parent.mkdir(parents=True, exist_ok=True)
                save_file(tensors, str(path / raw_file(step)))
            value = float(loss.item())
            metrics = {"index": step, "loss": value, "seconds": 0.001, "peak_memory_bytes": None}
            if not math.isfinite(value):  # as mpsready record writes it: JSON has no NaN
                metrics.update(loss=None, loss_nonfinite=str(value))
            step_metrics.append(metrics)
        w.manifest["step_metrics"] = step_metrics
    return path

"""The torch API as a Mac shows it: MPS built and available, CUDA absent, ``torch.mps.*`` working.

Patched for the emulated process only (``install`` returns the undo):

* ``Tensor.device`` / ``is_mps`` / ``is_cpu`` / ``get_device`` read the residence mark
  (:mod:`~mpsready.emulate.residence`), so ``x.device.type == "mps"`` branches take the Mac path;
  ``Tensor.data`` carries the mark both ways (``Module.to`` swaps parameters in through ``param.data = ...``,
  torch/nn/modules/module.py ``_apply``, 2.0-2.13), and so do ``nn.Parameter`` and ``nn.Buffer`` (a module built with
  ``device="mps"``);
* ``torch.backends.mps.is_available()`` is the target's answer (False below the release's minimum macOS),
  ``is_built()`` True, ``is_macos_or_newer`` compares with the target macOS;
* ``torch.mps``: ``synchronize``, ``empty_cache``, ``manual_seed``/``seed``/``get_rng_state``/``set_rng_state``
  (MPS tensors draw from this CPU's generator here), ``device_count`` 1, and memory queries that count the
  bytes of live resident tensors: emulated figures, said once on stderr;
* ``torch.cuda.is_available()`` False and ``device_count()`` 0, and ``torch.cuda._lazy_init`` raises a macOS
  wheel's "Torch not compiled with CUDA enabled" whatever the local build (a CUDA build with a GPU would
  otherwise run ``.cuda()``);
* the CUDA errors a non-CUDA build raises on a Mac as here are marked as Mac failures (kind ``cuda_api``,
  :func:`~mpsready.emulate.session.mark_mac_error`), at their source rather than by their text: what
  ``torch.cuda._lazy_init`` raises (every ``.cuda()``, ``device="cuda"``, ``torch.cuda.*`` call reaches it; the
  C++ side calls it by name, torch/csrc/utils/device_lazy_init.cpp, 2.0-2.13), what
  ``torch.serialization._validate_device`` raises for a CUDA checkpoint loaded without ``map_location``, and
  what ``init_process_group`` raises for an NCCL backend (macOS wheels have no NCCL);
* ``torch.set_default_device("mps")`` / ``get_default_device``; ``torch.load(map_location="mps")``.
* optimizer steps (or, in a program that builds no optimizer, backward passes) are counted for ``--max-steps``
  (:mod:`~mpsready.emulate.steps`).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

import torch

from mpsready.emulate import residence
from mpsready.emulate.dormant import PLAIN_ATTRIBUTES
from mpsready.emulate.session import Emulator, mark_mac_error
from mpsready import versions

_Base = torch._C.TensorBase
_MPS0 = torch.device("mps", 0)
_MARKS = residence._MARKS


def _device(self):
    if self in _MARKS:
        return _MPS0
    return _Base.device.__get__(self)


def _is_mps(self):
    return self in _MARKS


def _is_cpu(self):
    return self not in _MARKS and _Base.is_cpu.__get__(self)


def _get_device(self):
    return 0 if self in _MARKS else _Base.get_device(self)


def _data_get(self):
    d = _Base.data.__get__(self)
    if self in _MARKS:
        _MARKS[d] = True
    return d


def _data_set(self, value):
    _Base.data.__set__(self, value)
    if isinstance(value, torch.Tensor) and value in _MARKS:
        _MARKS[self] = True
    else:
        residence.unmark(self)


def _marked_new(real: Callable) -> Callable:
    """``real`` (``nn.Parameter.__new__`` or ``nn.Buffer.__new__``) carrying the residence mark of ``data``: each
    makes a new Python object over ``data``'s TensorImpl (``Tensor._make_subclass``, torch/nn/parameter.py, 2.0-2.13),
    so without it every module built with ``device="mps"`` (``nn.Linear(4, 4, device=dev)``, ``nn.RMSNorm(...,
    device=dev)``) had its parameters on the CPU and its first forward a false placement failure.
    ``_make_subclass`` itself is left alone: Dynamo substitutes it by a polyfill whose signature it checks."""
    def new(cls, data=None, *args, **kwargs):
        out = real(cls, data, *args, **kwargs)
        if data is not None and data in _MARKS:
            _MARKS[out] = True
        return out
    return staticmethod(new)


class _Patches:
    """Attribute patches and clean-up calls, undone in reverse order."""

    def __init__(self):
        self.saved: list[tuple[Any, str, Any, bool]] = []
        self.cleanups: list[Callable[[], None]] = []

    def on_undo(self, fn: Callable[[], None]) -> None:
        self.cleanups.append(fn)

    def set(self, owner: Any, name: str, value: Any) -> None:
        had = name in vars(owner) if isinstance(owner, type) else hasattr(owner, name)
        self.saved.append((owner, name, getattr(owner, name, None), had))
        setattr(owner, name, value)

    def undo(self) -> None:
        for fn in reversed(self.cleanups):
            fn()
        self.cleanups.clear()
        for owner, name, old, had in reversed(self.saved):
            if had:
                setattr(owner, name, old)
            else:
                try:
                    delattr(owner, name)
                except AttributeError:
                    pass
        self.saved.clear()


def install(emu: Emulator) -> Callable[[], None]:
    p = _Patches()
    T = torch.Tensor
    own = [property(_device), property(_is_mps), property(_is_cpu), property(_data_get, _data_set)]
    for name, prop in zip(("device", "is_mps", "is_cpu", "data"), own):
        p.set(T, name, prop)
    p.set(T, "get_device", _get_device)
    PLAIN_ATTRIBUTES.update(own)  # no aten call in them (dormant.py)
    p.on_undo(lambda: PLAIN_ATTRIBUTES.difference_update(own))
    p.set(torch.nn.Parameter, "__new__", _marked_new(torch.nn.Parameter.__new__))
    if hasattr(torch.nn, "Buffer"):  # torch.nn.Buffer, 2.5+
        p.set(torch.nn.Buffer, "__new__", _marked_new(torch.nn.Buffer.__new__))

    macos = emu.target.macos
    mps_backend = torch.backends.mps
    p.set(mps_backend, "is_available", lambda: emu.judge.available)
    p.set(mps_backend, "is_built", lambda: True)
    p.set(mps_backend, "is_macos_or_newer",
          lambda major, minor: not versions.macos_lt(macos, f"{major}.{minor}"))
    if hasattr(mps_backend, "is_macos13_or_newer"):
        p.set(mps_backend, "is_macos13_or_newer", lambda minor=0: not versions.macos_lt(macos, f"13.{minor}"))

    _install_mps_module(p, emu)
    _install_accelerator(p, emu)
    p.set(torch.cuda, "is_available", lambda: False)
    p.set(torch.cuda, "device_count", lambda: 0)
    _install_cuda_marks(p)
    _install_default_device(p, emu)
    p.set(torch, "Generator", _generator_class())
    _install_load(p, emu)

    from mpsready.emulate import steps

    undo_steps = steps.install(emu)

    def undo():
        undo_steps()
        p.undo()
    return undo


def _marking(real: Callable, applies: Callable[..., bool] = lambda *a, **k: True) -> Callable:
    """``real``, with the exceptions it raises marked ``cuda_api`` when ``applies(*args, **kwargs)``."""
    def wrapper(*args, **kwargs):
        try:
            return real(*args, **kwargs)
        except Exception as exc:
            if applies(*args, **kwargs):
                mark_mac_error(exc, "cuda_api")
            raise
    setattr(wrapper, "__wrapped__", real)
    return wrapper


def _no_cuda(*args, **kwargs):
    """``torch.cuda._lazy_init`` as a macOS wheel has it: no CUDA was compiled in, so it raises
    ``AssertionError("Torch not compiled with CUDA enabled")`` (torch/cuda/__init__.py ``_lazy_init``, the
    ``_cuda_getDeviceCount`` check, 2.0-2.13), marked ``cuda_api``. Never the local build's own: a CUDA build
    would initialise a real GPU (and ``.cuda()`` would complete: a false "it works") or, without a driver, say
    "Found no NVIDIA driver", which no Mac prints."""
    raise mark_mac_error(AssertionError("Torch not compiled with CUDA enabled"), "cuda_api")


def _install_cuda_marks(p: _Patches) -> None:
    import torch.serialization as ser

    p.set(torch.cuda, "_lazy_init", _no_cuda)
    if hasattr(ser, "_validate_device"):  # _validate_device(location, backend_name), torch/serialization.py 2.1+
        p.set(ser, "_validate_device", _marking(
            ser._validate_device, lambda location, backend_name, *a, **k: backend_name == "cuda"))
    if torch.distributed.is_available():
        import torch.distributed.distributed_c10d as c10d

        def nccl(backend=None, *a, **k) -> bool:  # "nccl", Backend.NCCL or "cpu:gloo,cuda:nccl"
            return backend is not None and "nccl" in str(backend).lower()
        real = c10d.init_process_group
        wrapped = _marking(real, nccl)
        p.set(c10d, "init_process_group", wrapped)
        if getattr(torch.distributed, "init_process_group", None) is real:
            p.set(torch.distributed, "init_process_group", wrapped)


def _memory_note(emu: Emulator) -> None:
    if not emu.memory_queried:
        emu.memory_queried = True
        print("mpsready run: torch.mps memory figures are emulated (bytes of live tensors on the emulated MPS "
              "device), not Metal's allocator", file=sys.stderr)


def _install_mps_module(p: _Patches, emu: Emulator) -> None:
    import torch.mps as mps

    def memory() -> int:
        _memory_note(emu)
        return residence.resident_bytes()

    def recommended() -> int:
        _memory_note(emu)
        return 0

    p.set(mps, "synchronize", lambda: None)
    p.set(mps, "empty_cache", lambda: None)
    # torch.manual_seed itself calls torch.mps.manual_seed when MPS is available (torch/random.py 2.0-2.13):
    # seed the CPU generator directly, which the emulated device draws from
    p.set(mps, "manual_seed", lambda seed: torch.default_generator.manual_seed(int(seed)) and None)
    p.set(mps, "seed", lambda: torch.default_generator.seed() and None)
    p.set(mps, "get_rng_state", lambda device="mps": torch.get_rng_state())
    p.set(mps, "set_rng_state", lambda new_state, device="mps": torch.set_rng_state(new_state))
    p.set(mps, "device_count", lambda: 1 if emu.judge.available else 0)
    p.set(mps, "current_allocated_memory", memory)
    p.set(mps, "driver_allocated_memory", memory)
    p.set(mps, "recommended_max_memory", recommended)
    p.set(mps, "set_per_process_memory_fraction", lambda fraction: None)
    if hasattr(mps, "is_available"):
        p.set(mps, "is_available", lambda: emu.judge.available)


def _generator_class():
    """``torch.Generator("mps")``: a CPU generator here (a subclass, so ``isinstance`` checks still hold)."""
    from mpsready.emulate.device import is_mps

    real = torch._C.Generator

    class Generator(real):
        def __new__(cls, device="cpu"):
            g = real.__new__(cls, "cpu" if is_mps(device) else device)
            g._mpsready_mps = is_mps(device)  # the generator-device check (dispatch.py, Judge.generator) reads it
            return g

        def __init__(self, device="cpu"):
            pass

        @property
        def device(self):
            return torch.device("mps", 0) if getattr(self, "_mpsready_mps", False) else real.device.__get__(self)

        def set_state(self, new_state):
            if getattr(self, "_mpsready_mps", False):  # a restored MPS generator (an advisory condition)
                self._mpsready_restored = True
            return real.set_state(self, new_state)

    Generator.__module__ = "torch"
    return Generator


def _install_accelerator(p: _Patches, emu: Emulator) -> None:
    """``torch.accelerator`` (2.6+; pytorch/examples pick their device with it): MPS is the accelerator."""
    acc = getattr(torch, "accelerator", None)
    if acc is None:
        return

    def memory(*_a, **_k) -> int:
        _memory_note(emu)
        return residence.resident_bytes()

    p.set(acc, "is_available", lambda: emu.judge.available)
    p.set(acc, "current_accelerator", lambda check_available=False: torch.device("mps")
          if emu.judge.available else None)
    p.set(acc, "device_count", lambda: 1 if emu.judge.available else 0)
    for name in ("current_device_index", "current_device_idx"):
        if hasattr(acc, name):
            p.set(acc, name, lambda: 0)
    for name in ("set_device_index", "set_device_idx", "synchronize", "empty_cache"):
        if hasattr(acc, name):
            p.set(acc, name, lambda *a, **k: None)
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
        if hasattr(acc, name):
            p.set(acc, name, memory)


def _install_default_device(p: _Patches, emu: Emulator) -> None:
    from mpsready.emulate.device import is_mps

    real_set = torch.set_default_device
    real_get = getattr(torch, "get_default_device", None)
    ctx = getattr(torch, "_GLOBAL_DEVICE_CONTEXT", None)
    had_context = getattr(ctx, "device_context", None) is not None

    def set_default_device(device):
        emu.default_mps = device is not None and is_mps(device)
        real_set(None if emu.default_mps else device)

    p.set(torch, "set_default_device", set_default_device)
    if not had_context:
        # the program's set_default_device("cpu") pushes a global DeviceContext mode: take it away on uninstall
        p.on_undo(lambda: real_set(None))
    if real_get is not None:
        p.set(torch, "get_default_device", lambda: _MPS0 if emu.default_mps else real_get())


def _install_load(p: _Patches, emu: Emulator) -> None:
    from mpsready.emulate.device import is_mps

    real_load = torch.load
    # the target release's default of weights_only (python_checks.yaml torch_load: False before 2.6)
    rule = emu.judge.torch_load_default()

    def load(f, map_location=None, *args, **kwargs):
        if rule is not None and kwargs.get("weights_only") is None and len(args) < 2 \
                and os.environ.get(rule["force_true_variable"], "0").lower() not in ("1", "y", "yes", "true"):
            kwargs["weights_only"] = rule["weights_only_default"]
        onto = map_location is not None and not callable(map_location) and not isinstance(map_location, dict) \
            and is_mps(map_location)
        obj = real_load(f, "cpu" if onto else map_location, *args, **kwargs)
        if onto:
            _move_all(obj)
        return obj

    def _move_all(obj, depth=0):
        if depth > 20:
            return
        if isinstance(obj, torch.Tensor):
            j = emu.judge.allocation(str(obj.dtype).replace("torch.", ""))
            if j is not None:  # a float64 tensor restored onto MPS is refused as any allocation there
                exc = emu.fail(j, "aten::_to_copy")
                if exc is not None:
                    raise exc
            residence.mark(obj)
        elif isinstance(obj, dict):
            for v in obj.values():
                _move_all(v, depth + 1)
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                _move_all(v, depth + 1)

    p.set(torch, "load", load)

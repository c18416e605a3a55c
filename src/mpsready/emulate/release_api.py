"""The target release's Python-level behaviour on MPS, where it differs from the installed torch's.

The emulated Mac runs the installed torch's Python code (2.13 here) whatever release is the target, so the few
checks that PyTorch makes in Python and that changed between releases are applied from a sourced table,
``ops/data/curated/python_checks.yaml`` (each entry: releases, exception class and text or warning, source).
Importing another release's Python files instead cannot work: they bind to the C++ library of their own
release. ``install(emu)`` returns the undo, like the other installers of this package:

* **optimizer constructors** (``optimizer_fused``): before 2.5, ``Adam``/``AdamW`` (and ``SGD``/``Adagrad`` in
  2.4) check ``fused=True`` in ``__init__`` against a device list without ``mps``: the release's
  ``RuntimeError`` is raised at the user's constructor line;
* **capturable** (``optimizer_capturable``): ``Adam``/``AdamW`` with ``capturable=True`` and MPS params raise
  the release's ``AssertionError`` at the user's ``step()`` line (a global step pre-hook);
* **foreach default** (``optimizer_foreach``): ``torch._C._group_tensors_by_device_and_dtype`` keys emulated
  tensors by their emulated device (``mps:0``), so ``clip_grad_norm_`` and the foreach paths take the
  per-tensor branch a Mac takes, instead of foreach kernels a Mac never calls there;
* **GradScaler** (``grad_scaler``): before 2.8 ``unscale_`` computes the inverse scale in float64 on the MPS
  scale tensor: ``.double()`` of it is judged as on the Mac (the float64 ``TypeError``);
* **autocast** (``autocast``): applied by :mod:`~mpsready.emulate.autocast` from the same table (the
  ``RuntimeError`` before 2.5, the "Disabling autocast" warnings of 2.5-2.9);
* **API surface** (``mps_api``): the public names of 15 modules (``torch``, ``torch.mps``, ``torch.nn``,
  ``torch.optim``, ...) that the target lacks, mined per release from the macOS wheels
  (:mod:`mpsready.ops.api_names`; the hand list of python_checks.yaml where that table cannot say), raise
  ``AttributeError: module 'torch.mps' has no attribute '...'`` for the program's own code, or the ``ImportError``
  of ``from torch.mps import ...``; a program's ``from torch.nn import *`` binds the target's ``__all__``
  (accesses from torch's and mpsready's own files still see them);
* **torch.compile** (``compile``): ``unsupported`` releases raise ``BackendCompilerFailed`` at the first call
  with MPS tensors, ``experimental`` ones give the release's warning; every release then runs the function
  *eagerly* under the emulator, so its ops are judged. Compiling here would run Inductor's CPU kernels, which
  the dispatch mode never sees (they are not aten calls), so the MPS ops would go unjudged.

Each decision is the judge's (:class:`mpsready.ops.api_judge.ApiChecks`, part of
:class:`~mpsready.ops.judge.Judge`): this module binds the program's arguments and tensors to plain values, asks,
and acts. Every exception raised here is marked a Mac failure (kind ``release_api`` or ``compile``,
:func:`~mpsready.emulate.session.mark_mac_error`) and recorded with the user's line.
"""

from __future__ import annotations

import dis
import functools
import inspect
import os
import sys
import types
import warnings
from collections.abc import Callable
from typing import Any

import torch

from mpsready.emulate import residence
from mpsready.emulate.session import Emulator
from mpsready.emulate.torch_api import _Patches
from mpsready.frames import package_dirs
from mpsready.ops.api_judge import KIND_API, KIND_COMPILE
from mpsready.ops.judge import Judgement
from mpsready.ops.inductor import mode_reason

__all__ = ["KIND_API", "KIND_COMPILE", "install"]
# PyTorch's and mpsready's own files, by the loaded packages' directories (never by a folder's name)
_LIBRARY = package_dirs("torch") + package_dirs("mpsready")


def _raise(emu: Emulator, j: Judgement, make: Callable[[str], BaseException] | None = None) -> None:
    """Record ``j`` as a failure at the user's line and raise it (nothing with ``--keep-going``); ``make``
    builds an exception of a class :meth:`Emulator.fail` does not make (AssertionError, BackendCompilerFailed)."""
    exc = emu.fail(j, j.op)
    if exc is None:
        return
    if make is not None:
        from mpsready.emulate.session import mark_mac_error

        new = make(j.message or "")
        mark_mac_error(new, j.kind or KIND_API)
        failure = emu.raised.pop(id(exc), None)
        if failure is not None:
            emu.raised[id(new)] = failure
        exc = new
    raise exc


def install(emu: Emulator) -> Callable[[], None]:
    p = _Patches()
    judge = emu.judge
    _install_fused(p, emu, judge.fused_optimizers())
    _install_capturable(p, emu, judge.capturable_optimizers())
    if judge.foreach_per_tensor:
        _install_grouping(p)
    if judge.grad_scaler_float64:
        _install_grad_scaler(p)
    missing = _missing_names(judge.torch, judge.missing_api())
    _install_surface(p, missing, emu.frames.owns, _version_answers(emu))
    if "compile_shader" not in missing.get("torch.mps", frozenset()) and hasattr(torch.mps, "compile_shader"):
        _install_shader(p, emu)
    if judge.compile_checked:
        _install_compile(p, emu)
    return p.undo


# ---------------------------------------------------------------------------------------------- optimizers
def _install_fused(p: _Patches, emu: Emulator, names: tuple[str, ...]) -> None:
    for name in dict.fromkeys(names):
        cls = getattr(torch.optim, name)
        p.set(cls, "__init__", _fused_init(emu, cls, cls.__init__))


def _fused_init(emu: Emulator, cls: type, real: Callable) -> Callable:
    sig = inspect.signature(real)

    def __init__(self, *args, **kwargs):
        try:
            fused = bool(sig.bind(self, *args, **kwargs).arguments.get("fused"))
        except TypeError:
            fused = False
        try:
            real(self, *args, **kwargs)
        except RuntimeError as exc:
            # the target checks devices before "`fused` and `foreach` cannot be `True` together."
            if not (fused and "foreach" in str(exc) and hasattr(self, "param_groups")):
                raise
        if not fused or getattr(self, "defaults", {}).get("differentiable"):
            return
        params = [p for g in self.param_groups for p in g["params"]]
        j = emu.judge.optimizer_fused(cls.__name__, frozenset(p.device.type for p in params),
                                      all(torch.is_floating_point(p) for p in params))
        if j is None:
            return
        _raise(emu, j)
        for g in self.param_groups:  # --keep-going: go on as the release would have, unfused
            g["fused"] = False
    setattr(__init__, "__wrapped__", real)
    return __init__


def _install_capturable(p: _Patches, emu: Emulator, names: tuple[str, ...]) -> None:
    if not names:
        return
    classes = tuple(getattr(torch.optim, n) for n in dict.fromkeys(names))
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    def hook(opt, args, kwargs):
        if not isinstance(opt, classes):
            return
        for g in opt.param_groups:
            on_mps = any(p.grad is not None and residence.on_mps(p) for p in g["params"])
            j = emu.judge.optimizer_step(type(opt).__name__, bool(g.get("capturable")), bool(g.get("fused")), on_mps)
            if j is not None:
                _raise(emu, j, AssertionError)
                return

    handle = register_optimizer_step_pre_hook(hook)
    p.on_undo(handle.remove)


def _install_grouping(p: _Patches) -> None:
    """``_group_tensors_by_device_and_dtype`` with emulated tensors keyed ``mps:0`` (python_checks.yaml
    ``optimizer_foreach``): same shape as the C++ function, ``{(device, dtype): ([list per tensorlist],
    indices)}``, indices only ``with_indices``."""
    real = torch._C._group_tensors_by_device_and_dtype

    def group(tensorlistlist, with_indices=False):
        first = tensorlistlist[0] if tensorlistlist else []
        if not any(t is not None and residence.on_mps(t) for t in first):
            return real(tensorlistlist, with_indices)
        out: dict[tuple, tuple[list, list]] = {}
        for i, t in enumerate(first):
            key = (t.device, t.dtype)
            entry = out.get(key)
            if entry is None:
                entry = out[key] = ([[] for _ in tensorlistlist], [])
            for k, lst in enumerate(tensorlistlist):
                if lst:  # an empty tensorlist stays empty (max_exp_avg_sqs without amsgrad)
                    entry[0][k].append(lst[i])
            if with_indices:
                entry[1].append(i)
        return out

    p.set(torch._C, "_group_tensors_by_device_and_dtype", group)


# ---------------------------------------------------------------------------------------------- amp
def _install_grad_scaler(p: _Patches) -> None:
    cls = torch.amp.GradScaler
    real = cls.unscale_

    def unscale_(self, optimizer):
        scale = getattr(self, "_scale", None)
        if self._enabled and isinstance(scale, torch.Tensor) and residence.on_mps(scale):
            scale.double()  # the release's inverse scale in float64 (judged: MPS refuses float64)
        return real(self, optimizer)

    p.set(cls, "unscale_", unscale_)


# ---------------------------------------------------------------------------------------------- API surface
def _missing_names(target: str, hand: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """The names the target lacks, per module: the mined table's (:func:`mpsready.ops.api_names.lacking`: every
    public name of the 15 modules it reads, per release, from the macOS wheels), and the hand list of
    python_checks.yaml ``mps_api`` (``hand``) unless the table says the target has the name (so where it cannot
    say: a module not fully known in the target or the installed release, a name its reading of the installed
    release did not see, a release it lacks; and where it leaves a name the installed module's functions read as
    a global, such as ``F.rms_norm``, hidden as before)."""
    from mpsready.ops.api_names import lacking

    mined = lacking(target, torch.__version__)
    if mined is None:
        return hand
    out = {m: set(v) for m, v in mined.names.items()}
    for module, names in mined.global_reads.items():
        if module in _SWAPPED:  # a swapped class hides without touching __dict__: globals keep working
            out.setdefault(module, set()).update(names)
    for module, names in hand.items():
        kept = {n for n in names if not mined.has(module, n)}
        out.setdefault(module, set()).update(kept)
    return {m: frozenset(v) for m, v in out.items()}


_IMPORT_FROM = dis.opmap["IMPORT_FROM"]
# modules whose class is swapped for _Hiding (every attribute read goes through Python: small modules the program
# reads rarely); the names of any other module (torch, torch.nn: read on every call) are taken out of its
# __dict__ and served by a module __getattr__ (PEP 562), which costs nothing for the names kept
_SWAPPED = ("torch.mps", "torch.backends.mps", "torch.amp")


def _missing_name(modname: str, name: str, module: types.ModuleType, frame: types.FrameType) -> BaseException:
    """What the target release's Python raises when ``frame`` reads ``modname.name`` that the release lacks, marked a
    Mac failure: ``AttributeError: module 'torch.amp' has no attribute 'GradScaler'``, or, read by ``from torch.amp
    import GradScaler`` (the frame is at its IMPORT_FROM instruction), the ``ImportError`` CPython's import_from
    raises there (``cannot import name 'GradScaler' from 'torch.amp' (FILE)``). CPython's import_from swallows an
    AttributeError and raises an ImportError of its own, unmarked; any other exception passes through it."""
    from mpsready.emulate.session import mark_mac_error

    exc: BaseException
    if frame.f_lasti >= 0 and frame.f_code.co_code[frame.f_lasti] == _IMPORT_FROM:
        path = types.ModuleType.__getattribute__(module, "__dict__").get("__file__")
        where = f" ({path})" if path else " (unknown location)"
        exc = ImportError(f"cannot import name '{name}' from '{modname}'{where}", name=modname, path=path)
    else:
        exc = AttributeError(f"module '{modname}' has no attribute '{name}'")
    return mark_mac_error(exc, KIND_API)


class _Hiding(types.ModuleType):
    """A module whose names listed in ``_mpsready_hidden`` raise AttributeError for the program's code."""

    def __getattribute__(self, name):
        hidden = types.ModuleType.__getattribute__(self, "__dict__").get("_mpsready_hidden", ())
        if name in hidden:
            frame = sys._getframe(1)
            if not frame.f_code.co_filename.startswith(_LIBRARY):
                modname = types.ModuleType.__getattribute__(self, "__name__")
                raise _missing_name(modname, name, self, frame)
        value = types.ModuleType.__getattribute__(self, name)
        if name == "__all__" and hidden and not sys._getframe(1).f_code.co_filename.startswith(_LIBRARY):
            return [n for n in value if n not in hidden]  # `from torch.mps import *`: the target's __all__
        return value

    def __getattr__(self, name):
        # a name no release has (torch.mps.current_device): the Mac's Python raises the same AttributeError, so it
        # is a Mac failure too, not the program's own error. Marked whoever asks: PyTorch's own code asks as well
        # (torch.cuda.device(None) -> torch._utils._get_current_device_index -> torch.mps.current_device, 2.13),
        # and the mark only counts if the exception reaches the program (a hasattr probe swallows it)
        modname = types.ModuleType.__getattribute__(self, "__name__")
        exc = AttributeError(f"module '{modname}' has no attribute '{name}'")
        if not name.startswith("__"):
            from mpsready.emulate.session import mark_mac_error

            mark_mac_error(exc, KIND_API)
        raise exc

    def __dir__(self):
        hidden = types.ModuleType.__getattribute__(self, "__dict__").get("_mpsready_hidden", ())
        return [n for n in types.ModuleType.__dir__(self) if n not in hidden]


def _hide_by_getattr(p: _Patches, mod: types.ModuleType, names: frozenset[str], owns: Callable[[Any], bool],
                     seen: dict[str, Callable[[], Any]] | None = None) -> None:
    """Take ``names`` (and the names of ``seen``) out of ``mod``'s ``__dict__`` and serve them by a module
    ``__getattr__``; a read from the program's own files (``owns(code)``, :meth:`mpsready.frames.UserFrames.owns`)
    raises what the release raises (:func:`_missing_name`), or for a name of ``seen`` gets ``seen[name]()`` (the
    target's ``__version__``, :func:`_version_answers`). Libraries keep seeing the installed torch, as they keep
    seeing this machine's platform (they read its ``torch.__version__``, 2.13 here, and gate these names on it).
    The module's own ``__getattr__`` (torch's lazy submodules) still answers every other name. Names kept in
    ``__dict__`` cost nothing: Python asks a module ``__getattr__`` only for a name its ``__dict__`` lacks."""
    d = mod.__dict__
    answers = dict(seen or {})
    listed = d.get("__all__")
    if isinstance(listed, (list, tuple)) and names.intersection(listed):
        # `from torch.nn import *` in the program binds the target's __all__, without the names it lacks
        kept_all = [n for n in listed if n not in names]
        answers["__all__"] = lambda: list(kept_all)
    stash = {n: d[n] for n in (*names, *answers) if n in d}
    if not stash:
        return
    previous = d.get("__getattr__")
    modname = mod.__name__

    def __getattr__(name: str):
        if name in stash:
            frame = sys._getframe(1)
            if not owns(frame.f_code):
                return stash[name]
            answer = answers.get(name)
            if answer is not None:
                return answer()
            raise _missing_name(modname, name, mod, frame)
        if previous is not None:
            return previous(name)
        raise AttributeError(f"module '{modname}' has no attribute '{name}'")

    previous_dir = d.get("__dir__")

    def __dir__() -> list[str]:
        # dir(torch) lists what the target has: its __version__ (served above), not the names it lacks (h40: the
        # target's __version__ was missing from dir(torch) during a run)
        base = previous_dir() if previous_dir is not None else list(d)
        return sorted({*base, *answers} - (set(stash) - set(answers)))

    for n in stash:
        del d[n]
    d["__getattr__"] = __getattr__
    d["__dir__"] = __dir__

    def restore() -> None:
        d.update(stash)
        for key, old in (("__getattr__", previous), ("__dir__", previous_dir)):
            if old is None:
                d.pop(key, None)
            else:
                d[key] = old
    p.on_undo(restore)


def _install_surface(p: _Patches, missing: dict[str, frozenset[str]], owns: Callable[[Any], bool],
                     seen: dict[str, dict[str, Callable[[], Any]]] | None = None) -> None:
    """Hide ``missing`` (module name -> names the target lacks) from the program's own files, and serve it the
    answers of ``seen`` (module name -> name -> answer) where it reads those names."""
    seen = seen or {}
    for modname in dict.fromkeys([*missing, *seen]):
        names = missing.get(modname, frozenset())
        mod = sys.modules.get(modname)
        if mod is None or type(mod) is not types.ModuleType:
            continue
        if modname not in _SWAPPED:
            if names or modname in seen:
                _hide_by_getattr(p, mod, names, owns, seen.get(modname))
            continue
        p.set(mod, "_mpsready_hidden", names)
        mod.__class__ = _Hiding

        def restore(mod=mod):
            mod.__class__ = types.ModuleType
        p.on_undo(restore)


# ---------------------------------------------------------------------------------------------- __version__
# where a program reads the release it runs on: torch/__init__.py imports torch.torch_version.__version__ (a
# TorchVersion of torch/version.py's string), so all three names hold it
VERSION_NAMES = (("torch", "__version__"), ("torch.version", "__version__"), ("torch.torch_version", "__version__"))


def target_version(emu: Emulator) -> str:
    """The version string the program sees: the target's full release as the emulator's data knows it
    (``Judge.torch``: ``"2.5.1"`` for ``--torch 2.5``), without a local suffix. The macOS wheels on PyPI carry
    none (``torch-2.5.1-cp311-none-macosx_11_0_arm64.whl`` reports ``2.5.1``), whatever this build's is
    (``2.13.0+cpu``, ``+cu121``)."""
    return emu.judge.torch


def _version_answers(emu: Emulator) -> dict[str, dict[str, Callable[[], Any]]]:
    """``torch.__version__``, ``torch.version.__version__`` and ``torch.torch_version.__version__`` for the program's
    own files: a ``torch.torch_version.TorchVersion`` of :func:`target_version` (it compares with strings and
    tuples as the real one does), so ``Version(torch.__version__) >= Version("2.6")`` takes the target's branch.
    PyTorch's and mpsready's files keep the installed string: they compare it (Inductor's cache keys, the export
    schema, ``cpp_extension``). The first read is noted on ``emu.version_seen`` for the run document."""
    from torch.torch_version import TorchVersion

    value = TorchVersion(target_version(emu))

    def answer() -> Any:
        emu.version_seen = True
        return value
    out: dict[str, dict[str, Callable[[], Any]]] = {}
    for modname, name in VERSION_NAMES:
        out.setdefault(modname, {})[name] = answer
    return out


class _ShaderLibrary:
    """What ``torch.mps.compile_shader`` gives the program on the emulated Mac: its kernels are callables that
    leave their arguments as they are (the Metal source is neither compiled nor run here)."""

    def __init__(self, source: str):
        self._source = source

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


def _install_shader(p: _Patches, emu: Emulator) -> None:
    """``torch.mps.compile_shader`` (2.7+): the installed CPU build raises "MPS is not available", which a Mac
    would not; the program's own Metal kernels cannot be compiled or run here, so the call is recorded as not
    verified at its line (the run is ``unverified``, never ``completed``) and a library of no-op kernels returned."""

    def compile_shader(source: str):
        emu.note_unverified_region("the program compiles its own Metal kernels (torch.mps.compile_shader): "
                                   "neither compiled nor run on the emulated Mac, their effect is missing here",
                                   emu.frames.locate(2), kind="metal_shader", op="torch.mps.compile_shader")
        return _ShaderLibrary(source)

    functools.update_wrapper(compile_shader, torch.mps.compile_shader)  # prints as the release's function
    p.set(torch.mps, "compile_shader", compile_shader)


# ---------------------------------------------------------------------------------------------- torch.compile
def _has_mps(args, kwargs, module: Any = None) -> bool:
    if isinstance(module, torch.nn.Module):
        for t in module.parameters():
            if residence.on_mps(t):
                return True
        for b in module.buffers():
            if residence.on_mps(b):
                return True
    stack = list(args) + list(kwargs.values())
    while stack:
        v = stack.pop()
        if isinstance(v, torch.Tensor):
            if residence.on_mps(v):
                return True
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return False


def _install_compile(p: _Patches, emu: Emulator) -> None:
    """``torch.compile`` replaced (module docstring); ``torch._dynamo`` (seconds to import) is imported by the
    program's first call of it, not here: a program that never compiles never pays for it (issue 39)."""
    warned = [False]

    def first_call(module: Any, args, kwargs) -> None:
        # a CPU graph is Inductor's CPU backend on a Mac (needs a C++ compiler there; not judged); with
        # suppress_errors the release falls back to eager (its own warning is not reproduced)
        import torch._dynamo.config as dcfg

        j = emu.judge.compile(_has_mps(args, kwargs, module), bool(getattr(dcfg, "suppress_errors", False)))
        if j is None:
            return
        if j.fails:
            _raise(emu, j, _compiler_failed)
        elif not warned[0]:
            warned[0] = True
            frame = emu.frames.locate(3)
            if frame is None:
                warnings.warn(j.message or "", UserWarning, stacklevel=4)
            else:
                warnings.warn_explicit(j.message or "", UserWarning, os.path.join(emu.root, frame.path), frame.line)

    def eager(fn: Callable, module: Any = None, inductor: bool = True, dynamic: bool = False,
              unvouched_mode: str | None = None) -> Callable:
        state = {"compiled": False}

        @functools.wraps(fn)
        def run(*args, **kwargs):
            if not state["compiled"]:
                first_call(module, args, kwargs)
                state["compiled"] = _has_mps(args, kwargs, module)
            if not inductor or emu.compiling or not (state["compiled"] or _has_mps(args, kwargs, module)):
                return fn(*args, **kwargs)
            # a region on MPS that this release compiles: its calls are collected (dispatch.py), then the judge
            # says whether the emulated Mac can vouch for Inductor's Metal code of it (else: unverified)
            frame = emu.frames.locate(2)
            emu.compiling += 1
            emu.compiled_ops = set()
            emu.compiled_named = set()
            try:
                out = fn(*args, **kwargs)
            finally:
                emu.compiling -= 1
                ops, emu.compiled_ops = emu.compiled_ops, set()
                named, emu.compiled_named = emu.compiled_named, set()
            refused = emu.judge.compile_refusal(ops, dynamic)  # what this release's Inductor is known to refuse
            if refused is not None:
                _raise(emu, refused, _inductor_error)
            # a call a compiled wrong-result advisory names is judged (it compiles and computes wrong)
            reason = emu.judge.compile_region([o for o in ops if o[0] not in named] if named else ops)
            if reason is not None:
                emu.note_unverified_region(reason, frame)
            elif unvouched_mode is not None:  # a compile mode or options no fact covers (ops/inductor.py)
                emu.note_unverified_region(unvouched_mode, frame)
            return out
        return run

    def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
                disable=False, **rest):
        if model is None:
            return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                     options=options, disable=disable, **rest)
        from torch._dynamo.eval_frame import DisableContext, OptimizedModule

        if disable or backend not in ("inductor", None):
            # another backend (aot_eager, eager) or disabled: no Inductor, the ops run as they are
            plain = functools.partial(eager, inductor=False)
            if disable or not isinstance(model, torch.nn.Module):
                return model if disable else plain(model)
            return OptimizedModule(model, _Eager(DisableContext, plain, model))
        inductor_eager = functools.partial(eager, dynamic=bool(dynamic),
                                           unvouched_mode=mode_reason(emu.judge.torch, mode, options))
        if isinstance(model, torch.nn.Module):
            return OptimizedModule(model, _Eager(DisableContext, inductor_eager, model))
        return inductor_eager(model)

    setattr(compile, "__wrapped__", torch.compile)
    p.set(torch, "compile", compile)


class _Eager:
    """The ``dynamo_ctx`` of an eager OptimizedModule: ``_orig_mod`` and the state-dict prefix as a compiled
    module has them, the forward run eagerly (OptimizedModule._initialize wraps the module's call with it)."""

    def __new__(cls, disable_cls, eager, module):
        class Ctx(disable_cls):
            def __call__(self, fn):
                return eager(fn, module)
        return Ctx()


def _inductor_error(message: str) -> BaseException:
    """``torch._inductor.exc.InductorError`` (a ``BackendCompilerFailed``) with the target's text, as Inductor
    raises a Metal shader that fails to compile; ``BackendCompilerFailed`` where the installed torch lacks it."""
    try:
        from torch._inductor.exc import InductorError
    except ImportError:  # pragma: no cover - torch before InductorError
        return _compiler_failed(message)
    exc = InductorError.__new__(InductorError)
    Exception.__init__(exc, message)
    return exc


def _compiler_failed(message: str) -> BaseException:
    """``torch._dynamo.exc.BackendCompilerFailed`` with the target's text (its constructor builds the
    "backend=... raised:" text from an inner exception; the installed class takes a frame as well)."""
    from torch._dynamo.exc import BackendCompilerFailed

    exc = BackendCompilerFailed.__new__(BackendCompilerFailed)
    Exception.__init__(exc, message)
    exc.backend_name = "inductor"
    inner = message.split("raised:\n", 1)[-1]
    cls_name, _, text = inner.partition(": ")
    exc.inner_exception = {"AssertionError": AssertionError}.get(cls_name, RuntimeError)(text or inner)
    return exc

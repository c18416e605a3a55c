"""The Mac's identity where the program looks, and the emulated device in every thread of the program.

* **Platform.** The program's own code (files under the run's root, not site-packages, not mpsready) reads
  ``sys.platform == "darwin"``, ``platform.system() == "Darwin"``, ``platform.machine() == "arm64"`` (``"x86_64"`` for an Intel Mac target),
  ``platform.mac_ver()[0] ==`` the target macOS, ``platform.processor()`` ``"arm"`` (``"i386"`` on an Intel Mac: what
  Python's ``platform`` reports there, ``uname -p``), ``platform.platform()``/``uname()``/``release()`` to match and
  ``os.uname()`` with ``sysname`` ``Darwin``, so ``dev = "mps" if sys.platform == "darwin" else "cuda"`` takes the
  Mac's branch. Libraries keep seeing this machine: they choose native extensions by platform (psutil loads
  ``_psosx`` on darwin), which a Linux machine does not have, and making them fail would say nothing about the
  Mac. ``sys`` is a thin module proxy in ``sys.modules`` whose ``platform`` answers by the reading frame's file;
  code imported before the run keeps the real module.
* **Threads.** PyTorch keeps the torch-function and dispatch mode stacks per thread (torch/csrc/utils/
  torch_dispatch_mode.h, python_torch_function_mode.h; threads started by ``threading`` do not inherit them,
  unlike the autograd engine's workers), so every ``threading.Thread`` the program starts pushes the emulated
  device's two modes first (``Thread._bootstrap_inner``, which every subclass's ``run`` goes through), and so
  does a thread started below ``threading`` with ``_thread.start_new_thread`` (issue 34).
"""

from __future__ import annotations

import os
import platform
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

_REAL_SYS = sys


class _SysProxy(types.ModuleType):
    """``sys`` for the program: every attribute is the real module's, except ``platform`` read from the
    program's own files."""

    def __init__(self, is_user: Callable[[Any], bool]):
        super().__init__("sys")
        object.__setattr__(self, "_is_user", is_user)

    def __getattribute__(self, name: str) -> Any:
        if name == "platform":
            frame = _REAL_SYS._getframe(1)
            if object.__getattribute__(self, "_is_user")(frame.f_code):
                return "darwin"
            return _REAL_SYS.platform
        if name in ("_is_user", "__class__", "__dict__"):
            return object.__getattribute__(self, name)
        return getattr(_REAL_SYS, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(_REAL_SYS, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(_REAL_SYS, name)

    def __dir__(self):
        return dir(_REAL_SYS)


def _mac_answers(macos: str, machine: str = "arm64") -> dict[str, Any]:
    # what Python on Apple silicon (machine "arm64") or an Intel Mac ("x86_64") answers (Lib/platform.py: mac_ver
    # reads SystemVersion.plist and gives the machine as uname's; platform() is "macOS-V-x86_64-i386-64bit" on
    # Intel, the processor being "i386" there). The Darwin release tracks macOS: 14 is Darwin 23, 15 is 24, 26 is 25.
    major = int(macos.split(".")[0])
    darwin = {11: 20, 12: 21, 13: 22, 14: 23, 15: 24}.get(major, 25 if major >= 26 else 20)
    release = f"{darwin}.0.0"
    node = platform.node()
    processor = "i386" if machine == "x86_64" else "arm"
    uname = platform.uname_result("Darwin", node, release, f"Darwin Kernel Version {release}", machine)
    try:  # its processor field is a cached_property that asks this machine (Lib/platform.py, 3.9+)
        vars(uname)["processor"] = processor
    except TypeError:  # pragma: no cover - a Python whose uname_result has no __dict__
        pass
    return {"system": "Darwin", "machine": machine, "release": release, "processor": processor,
            "mac_ver": (macos, ("", "", ""), machine),
            "platform": f"macOS-{macos}-{machine}-{processor}-64bit",
            "uname": uname,
            "os_uname": os.uname_result(("Darwin", node, release, f"Darwin Kernel Version {release}", machine))}


def install(emu) -> Callable[[], None]:
    """Put the Mac's identity and the per-thread device in place for ``emu``
    (:class:`~mpsready.emulate.session.Emulator`); returns the undo."""
    def is_user(code) -> bool:  # the program's own files, as the emulator locates the user's line
        return emu.frames.owns(code)
    answers = _mac_answers(emu.target.macos, getattr(emu.target, "machine", "arm64"))
    saved: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, value: Any) -> None:
        saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def by_caller(real: Callable, mac_value: Any) -> Callable:
        def answer(*args, **kwargs):
            if is_user(_REAL_SYS._getframe(1).f_code):
                return mac_value
            return real(*args, **kwargs)
        setattr(answer, "__wrapped__", real)
        answer.__name__ = getattr(real, "__name__", "answer")
        return answer

    for name in ("system", "machine", "release", "processor", "mac_ver", "platform", "uname"):
        patch(platform, name, by_caller(getattr(platform, name), answers[name]))
    patch(os, "uname", by_caller(os.uname, answers["os_uname"]))
    proxy = _SysProxy(is_user)
    real_entry = sys.modules.get("sys")
    sys.modules["sys"] = proxy

    real_bootstrap = getattr(threading.Thread, "_bootstrap_inner")  # CPython's per-thread entry (Lib/threading.py)

    def bootstrap_inner(self):
        # the thread's own mode stacks start empty: push the emulated device's modes for the thread's life
        from mpsready.emulate import device, dispatch

        undo = []
        try:
            undo = [dispatch.install(emu), device.install(emu)]
        except Exception:  # noqa: BLE001 - the thread runs, unemulated, rather than not at all
            undo = []
        try:
            real_bootstrap(self)
        finally:
            for u in reversed(undo):
                try:
                    u()
                except Exception:  # noqa: BLE001 - a mode stack already unwound by the thread itself
                    pass

    patch(threading.Thread, "_bootstrap_inner", bootstrap_inner)

    import _thread

    wrapped = _emulated_start(emu, _thread.start_new_thread)  # threading keeps its own reference: not wrapped twice
    for name in ("start_new_thread", "start_new"):
        if hasattr(_thread, name):
            patch(_thread, name, wrapped)

    def undo() -> None:
        sys.modules["sys"] = real_entry if real_entry is not None else _REAL_SYS
        for owner, name, old in reversed(saved):
            setattr(owner, name, old)
        saved.clear()
    return undo


def _emulated_start(emu, real_start):
    """``_thread.start_new_thread`` whose thread pushes the emulated device's modes first (a thread started
    below ``threading`` has empty mode stacks too, module docstring)."""
    def start_new_thread(function, args, kwargs=None):
        def emulated(*a, **k):
            from mpsready.emulate import device, dispatch

            try:
                undo = [dispatch.install(emu), device.install(emu)]
            except Exception:  # noqa: BLE001 - the thread runs, unemulated, rather than not at all
                undo = []
            try:
                return function(*a, **k)
            finally:
                for u in reversed(undo):
                    try:
                        u()
                    except Exception:  # noqa: BLE001 - a mode stack already unwound by the thread itself
                        pass
        return real_start(emulated, args, kwargs or {})
    return start_new_thread

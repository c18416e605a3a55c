"""The operating-system facts ``env`` needs, behind one small interface so tests can fake a Mac.

:class:`Platform` is what :func:`mpsready.env.collect.collect_env` reads; :class:`RealPlatform`
asks the running system. On macOS it reads ``sysctl`` values through ``sysctlbyname(3)``
(ctypes on ``libc``), no subprocess:

* ``sysctl.proc_translated``: 1 when the process runs translated by Rosetta 2, 0 when native,
  absent (ENOENT) on Intel Macs. Source: Apple, "About the Rosetta Translation Environment",
  https://developer.apple.com/documentation/apple-silicon/about-the-rosetta-translation-environment
* ``hw.optional.arm64``: 1 on Apple silicon, even inside a translated process (same page).
* ``machdep.cpu.brand_string``: the chip, e.g. ``"Apple M2 Pro"``; ``hw.memsize``: physical
  memory in bytes, which on Apple silicon is the unified memory shared by CPU and GPU.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform as _platform
import sys
from pathlib import Path
from typing import Protocol


class Platform(Protocol):
    """What ``env`` asks the operating system. Every method returns ``None`` when it cannot tell."""

    def system(self) -> str: ...  # "Darwin", "Linux", "Windows"

    def release(self) -> str: ...  # kernel release

    def interpreter_machine(self) -> str: ...  # arch the running Python was built for: "arm64", "x86_64"

    def mac_version(self) -> str | None: ...  # exact product version, e.g. "14.4.1"; None off macOS

    def sysctl_int(self, name: str) -> int | None: ...

    def sysctl_str(self, name: str) -> str | None: ...

    def read_text(self, path: str) -> str | None: ...  # /proc files on Linux


class RealPlatform:
    """The running system (see the module docstring for the sysctl names and their source)."""

    def system(self) -> str:
        return _platform.system()

    def release(self) -> str:
        return _platform.release()

    def interpreter_machine(self) -> str:
        # platform.machine() reports the arch the process runs as: "x86_64" under Rosetta.
        return _platform.machine()

    def mac_version(self) -> str | None:
        if sys.platform != "darwin":
            return None
        return _platform.mac_ver()[0] or None

    def _sysctl_raw(self, name: str) -> bytes | None:
        if sys.platform != "darwin":
            return None
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.dylib", use_errno=True)
            size = ctypes.c_size_t(0)
            if libc.sysctlbyname(name.encode(), None, ctypes.byref(size), None, 0) != 0:
                return None
            buf = ctypes.create_string_buffer(size.value)
            if libc.sysctlbyname(name.encode(), buf, ctypes.byref(size), None, 0) != 0:
                return None
            return buf.raw[: size.value]
        except (OSError, AttributeError):
            return None

    def sysctl_int(self, name: str) -> int | None:
        raw = self._sysctl_raw(name)
        if raw is None or len(raw) not in (4, 8):
            return None
        return int.from_bytes(raw, sys.byteorder, signed=True)

    def sysctl_str(self, name: str) -> str | None:
        raw = self._sysctl_raw(name)
        return raw.rstrip(b"\0").decode("utf-8", "replace") if raw is not None else None

    def read_text(self, path: str) -> str | None:
        try:
            return Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

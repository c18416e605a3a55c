"""The emulated Mac that ``mpsready run``'s child installed, lent to the pytest plugin when the program is the
project's test suite (``mpsready run -- python -m pytest``): the plugin then reuses it instead of installing its
own, and hands back the Mac failures its tests ended on. A leaf module, so neither imports the other."""

from __future__ import annotations

from typing import Any

# set by mpsready run's child: {"emu": Emulator, "torch": requested release, "entries": [failure dicts]}
ATTACHED: dict[str, Any] = {}


def attach(emu: Any, torch_requested: str) -> None:
    """Lend ``emu`` (installed by ``mpsready run``'s child) to the plugin: the session is emulated whether or
    not ``--mps-emulate`` is given."""
    ATTACHED.clear()
    ATTACHED.update(emu=emu, torch=torch_requested, entries=[])


def attached_failures() -> list[dict[str, Any]]:
    """The Mac failures the attached session's tests ended on (also those the emulator only marked)."""
    return list(ATTACHED.get("entries", []))

"""Release numbers of PyTorch and macOS, as every stage parses and compares them (no third-party import).

PyTorch's own ``torch.__version__`` is a ``TorchVersion`` (a ``str`` subclass) such as ``"2.13.0+cpu"``,
``"2.5.0a0+git1234"`` or ``"2.6.0.dev20241001"`` (torch/torch_version.py, PyTorch 2.x); macOS reports
``"14.4.1"`` through ``platform.mac_ver()`` (Python stdlib). Only the leading numeric release matters to the
support tables, so a local tag (``+cpu``), a pre-release (``a0``, ``rc1``) or a ``.dev`` suffix is dropped.
``packaging.version.Version`` stays the parser for requirement specifiers (scan) and curated ranges (ops):
those follow PEP 440, these follow the tables' ``major.minor[.patch]`` keys.
"""

from __future__ import annotations


def release(text: str) -> tuple[int, ...]:
    """The numeric release: ``"2.13.0+cpu"`` -> ``(2, 13, 0)``, ``"14.4"`` -> ``(14, 4)``, ``"2.5.0a0"`` ->
    ``(2, 5, 0)``, ``"2.6.0.dev2024"`` -> ``(2, 6, 0)``.

    Raises:
        ValueError: ``text`` does not start with a number (``"latest"``, ``""``, ``".5"``).
    """
    core = str(text).strip().split("+", 1)[0]
    parts: list[int] = []
    for piece in core.split("."):
        digits = ""
        for ch in piece:  # the leading digits only: "0a0" -> "0", "0rc1" -> "0"
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            if parts:
                break  # "2.5.0a0" / "2.6.0.dev2024" -> keep the numeric prefix
            raise ValueError(f"not a version: {text!r}")
        parts.append(int(digits))
        if not piece.isdigit():
            break
    return tuple(parts)


def minor(text: str) -> tuple[int, ...]:
    """``(major, minor)`` of :func:`release` (``"2.13.1"`` -> ``(2, 13)``); raises ``ValueError`` like it."""
    return release(text)[:2]


def same_minor(a: str, b: str) -> bool:
    """Whether two releases share major and minor (``"2.5.1"`` and ``"2.5.0+cpu"``); raises ``ValueError``."""
    return minor(a) == minor(b)


def macos_lt(a: str, b: str) -> bool:
    """``a < b`` for macOS versions, padding with zeros (``"14" < "14.0.1"``, ``"13.5" < "14.0"``).

    Raises:
        ValueError: either is not a version (see :func:`release`).
    """
    ta, tb = release(a), release(b)
    n = max(len(ta), len(tb))
    return ta + (0,) * (n - len(ta)) < tb + (0,) * (n - len(tb))


#: macOS major releases that exist (Apple's numbering: 10.x, then 11-15 from 2020 to 2024, then the year-based 26
#: "Tahoe" in 2025 and 27 in 2026; source: Apple's release notes and the WWDC 2025 announcement of year-based numbers).
MACOS_MAJORS = (10, 11, 12, 13, 14, 15, 26, 27)
#: The last macOS an Intel Mac runs: Apple said at WWDC 2025 that macOS 26 Tahoe is the last release for Intel Macs.
MACOS_LAST_INTEL = 26


def check_macos(text: str, machine: str = "arm64") -> tuple[int, ...]:
    """The release of ``text`` (``"14.4"`` -> ``(14, 4)``) after checking that such a macOS exists for ``machine``
    (``"arm64"`` Apple silicon, ``"x86_64"`` Intel).

    Raises:
        ValueError: ``text`` is not a version, names a macOS major release that does not exist (``"99"``,
            ``"16.0"``: macOS went from 15 to 26 in 2025), or one an Intel Mac cannot run (past 26); the message
            says which, in words a command line can print as is.
    """
    try:
        rel = release(text)
    except ValueError:
        raise ValueError(f"--macos {text!r} is not a macOS version such as 14.4") from None
    if rel[0] not in MACOS_MAJORS:
        raise ValueError(f"--macos {text!r}: there is no macOS {rel[0]} (releases are 10.x, 11 to 15, then 26 and 27: "
                         "macOS went from 15 to 26 in 2025)")
    if machine == "x86_64" and rel[0] > MACOS_LAST_INTEL:
        raise ValueError(f"--macos {text!r}: an Intel Mac runs macOS {MACOS_LAST_INTEL} at most (macOS 26 Tahoe "
                         "is the last release for Intel Macs)")
    return rel

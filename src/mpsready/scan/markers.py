"""The Mac's PEP 508 marker environment, and whether a marker holds there.

Markers are evaluated with :class:`packaging.markers.Marker` (PEP 508 environment markers). The target is
Apple silicon (``platform_machine == 'arm64'``, ``sys_platform == 'darwin'``) with CPython 3.11, unless a
lock file's ``requires-python`` excludes 3.11; then the closest release it allows is used (see
:func:`mac_python`), so that a ``python_full_version < '3.11'`` edge of a project pinned below 3.11 still
counts as installed.
"""

from __future__ import annotations

import functools

# The environment a Mac user installs into: Apple silicon, CPython 3.11 (PEP 508 marker variables).
MAC_MARKER_ENV = {
    "sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix", "platform_machine": "arm64",
    "implementation_name": "cpython", "platform_python_implementation": "CPython", "python_version": "3.11",
    "python_full_version": "3.11.9", "extra": "",
}
# Python releases tried in this order when a project's requires-python excludes 3.11 (nearest first).
_PYTHONS = ("3.11.9", "3.12.9", "3.10.14", "3.13.5", "3.9.19", "3.14.0", "3.8.18", "3.7.17")


def mac_python(requires_python: object) -> str:
    """The Python (full version, ``"3.11.9"``) a Mac install of a project with this ``requires-python``
    uses: 3.11 when allowed, else the nearest allowed release. A missing or non-PEP 440 value (poetry's
    ``^3.8``) gives 3.11."""
    if not isinstance(requires_python, str) or not requires_python.strip():
        return MAC_MARKER_ENV["python_full_version"]
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # here: a scan without markers never loads it

    try:
        allowed = SpecifierSet(requires_python)
    except InvalidSpecifier:
        return MAC_MARKER_ENV["python_full_version"]
    return next((v for v in _PYTHONS if allowed.contains(v)), MAC_MARKER_ENV["python_full_version"])


@functools.lru_cache(maxsize=4096)  # a project repeats a handful of markers on many lines and lock edges
def marker_on_mac(marker: str, python: str = MAC_MARKER_ENV["python_full_version"]) -> bool:
    """Whether PEP 508 ``marker`` holds on macOS arm64 with CPython ``python`` (full version). A marker that
    does not parse is given the benefit of the doubt (True): its package is judged, never silently dropped."""
    env = MAC_MARKER_ENV if python == MAC_MARKER_ENV["python_full_version"] else {
        **MAC_MARKER_ENV, "python_full_version": python, "python_version": ".".join(python.split(".")[:2])}
    from packaging.markers import InvalidMarker, Marker  # here: the analysis reads MAC_MARKER_ENV alone

    try:
        return Marker(marker).evaluate(env)
    except (InvalidMarker, ValueError, KeyError, TypeError):
        return True

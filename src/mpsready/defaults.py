"""Defaults several stages share, importable without any of them (the argument definitions read them).

``DEFAULT_MACOS``: the macOS release ``trace``, ``run`` and ``check`` predict for when ``--macos`` is not
given (a version string, ``"15.5"``; the newest macOS the shipped support tables' macOS rules were written
against, see ``mpsready/ops/data``).
"""

DEFAULT_MACOS = "15.5"

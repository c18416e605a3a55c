"""Defaults several stages share, importable without any of them (the argument definitions read them).

``DEFAULT_MACOS``: the macOS release ``trace``, ``run`` and ``check`` predict for when ``--macos`` is not
given (a version string, ``"15.5"``; the newest macOS the shipped support tables' macOS rules were written
against, see ``mpsready/ops/data``).
"""

DEFAULT_MACOS = "15.5"

# The longest --time-limit (seconds) of ``run`` and ``migrate --verify``: a year. Longer values overflow the child's
# interval timer (``signal.setitimer``: "timestamp out of range for platform time_t" from about 1e10 s, and ``inf``),
# which ended the run ``inconclusive`` blaming the program (h40b); ``run --time-limit 0`` means no limit.
MAX_TIME_LIMIT_S = 365 * 24 * 3600

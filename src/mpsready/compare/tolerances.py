"""Tolerances: dtype-aware defaults, per-pattern overrides, and where each came from.

An element fails only when it breaks both tolerances, as ``torch.testing.assert_close``
defines it (torch/testing/_comparison.py, ``torch.isclose``)::

    |actual - expected| > atol + rtol * |expected|

Here ``expected`` is the baseline side of a pair: record A in ``compare A B``, and the
reference C in a three-way comparison.

Precedence, most specific first (documented in docs/compare.md):

1. a ``--tolerance PATTERN=RTOL,ATOL`` on the command line whose fnmatch pattern matches
   the tensor key (the last matching one given wins),
2. a pattern in ``[tool.mpsready.compare.tolerances]`` of pyproject.toml (last match wins),
3. ``--rtol`` / ``--atol`` on the command line (each alone replaces only its own value),
4. ``rtol`` / ``atol`` in ``[tool.mpsready.compare]``,
5. the dtype default of ``torch.testing.assert_close`` (:data:`DTYPE_DEFAULTS`). When the
   two sides have different dtypes the loosest of the two defaults is used, as
   ``torch.testing._comparison.default_tolerances`` does for several inputs.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from mpsready.errors import UsageError

TORCH_SOURCE = "torch/testing/_comparison.py _DTYPE_PRECISIONS, PyTorch 2.13.0"

# dtype -> (rtol, atol), copied from torch/testing/_comparison.py (PyTorch 2.13.0,
# _DTYPE_PRECISIONS); quantized dtypes use the float32 values there. Any other dtype
# (integers, bool) gets (0.0, 0.0): exact equality, as in default_tolerances().
DTYPE_DEFAULTS: Mapping[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
    "quint8": (1.3e-6, 1e-5),
    "quint2x4": (1.3e-6, 1e-5),
    "quint4x2": (1.3e-6, 1e-5),
    "qint8": (1.3e-6, 1e-5),
    "qint32": (1.3e-6, 1e-5),
}


@dataclass(frozen=True)
class Tolerance:
    """``rtol`` and ``atol`` (dimensionless and in the tensor's units) and their origin,
    e.g. ``"default float32 (torch/testing/_comparison.py ...)"`` or ``"--tolerance grad:*"``."""

    rtol: float
    atol: float
    source: str

    def allows(self, diff: float, expected: float) -> bool:
        return diff <= self.atol + self.rtol * abs(expected)

    def to_dict(self) -> dict[str, Any]:
        return {"rtol": self.rtol, "atol": self.atol, "source": self.source}


def default_tolerance(*dtypes: str) -> Tolerance:
    """The loosest ``assert_close`` default over ``dtypes`` (exact for non-float dtypes)."""
    pairs = [DTYPE_DEFAULTS.get(d, (0.0, 0.0)) for d in dtypes] or [(0.0, 0.0)]
    rtol = max(p[0] for p in pairs)
    atol = max(p[1] for p in pairs)
    names = "/".join(sorted(set(dtypes)))
    return Tolerance(rtol, atol, f"default {names} ({TORCH_SOURCE})")


@dataclass(frozen=True)
class PatternTolerance:
    pattern: str
    rtol: float
    atol: float
    origin: str  # "--tolerance" or "pyproject.toml"


@dataclass
class ToleranceSpec:
    """What the user asked for; :meth:`resolve` gives the tolerance of one tensor."""

    cli_patterns: list[PatternTolerance] = field(default_factory=list)
    config_patterns: list[PatternTolerance] = field(default_factory=list)
    cli_rtol: float | None = None
    cli_atol: float | None = None
    config_rtol: float | None = None
    config_atol: float | None = None
    config_path: str | None = None

    def resolve(self, key: str, *dtypes: str) -> Tolerance:
        for patterns in (self.cli_patterns, self.config_patterns):
            for p in reversed(patterns):  # last match wins
                if fnmatch.fnmatchcase(key, p.pattern):
                    return Tolerance(p.rtol, p.atol, f"{p.origin} {p.pattern}")
        base = default_tolerance(*dtypes)
        rtol, atol, src = base.rtol, base.atol, [base.source]
        if self.config_rtol is not None or self.config_atol is not None:
            rtol = self.config_rtol if self.config_rtol is not None else rtol
            atol = self.config_atol if self.config_atol is not None else atol
            src = ["pyproject.toml [tool.mpsready.compare]"]
        if self.cli_rtol is not None or self.cli_atol is not None:
            rtol = self.cli_rtol if self.cli_rtol is not None else rtol
            atol = self.cli_atol if self.cli_atol is not None else atol
            src = ["--rtol/--atol"]
        return Tolerance(rtol, atol, src[0])

    def to_dict(self) -> dict[str, Any]:
        return {
            "precedence": ["--tolerance PATTERN", "pyproject patterns", "--rtol/--atol", "pyproject rtol/atol",
                           "dtype default"],
            "cli_patterns": [p.__dict__ for p in self.cli_patterns],
            "config_patterns": [p.__dict__ for p in self.config_patterns],
            "cli": {"rtol": self.cli_rtol, "atol": self.cli_atol},
            "config": {"path": self.config_path, "rtol": self.config_rtol, "atol": self.config_atol},
            "defaults": {k: {"rtol": v[0], "atol": v[1]} for k, v in DTYPE_DEFAULTS.items()},
            "defaults_source": TORCH_SOURCE,
        }


def _nonneg(value: Any, what: str) -> float:
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{what}: {value!r} is not a number") from None
    if not f >= 0 or f == float("inf"):
        raise UsageError(f"{what}: {value!r} must be a finite number >= 0")
    return f


def parse_cli_pattern(text: str) -> PatternTolerance:
    """Parse ``PATTERN=RTOL,ATOL`` (e.g. ``grad:*=1e-4,1e-6``); raises :class:`UsageError`."""
    pattern, sep, values = text.rpartition("=")
    parts = values.split(",")
    if not sep or not pattern or len(parts) != 2:
        raise UsageError(f"--tolerance {text!r}: expected PATTERN=RTOL,ATOL, e.g. 'grad:*=1e-4,1e-6'")
    return PatternTolerance(pattern, _nonneg(parts[0], f"--tolerance {pattern} rtol"),
                            _nonneg(parts[1], f"--tolerance {pattern} atol"), "--tolerance")


def find_pyproject(start: str | os.PathLike[str] = ".") -> Path | None:
    """The nearest pyproject.toml at or above ``start`` (stops at a ``.git`` folder)."""
    here = Path(start).resolve()
    for d in (here, *here.parents):
        if (d / "pyproject.toml").is_file():
            return d / "pyproject.toml"
        if (d / ".git").exists():
            return None
    return None


def load_config(path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """``[tool.mpsready.compare]`` of a pyproject.toml as a dict ({} when absent)."""
    if path is None:
        return {}
    try:
        doc = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    except RecursionError:
        raise UsageError(f"cannot read {path}: TOML nested too deeply to read") from None
    table: Any = doc
    keys = ("tool", "mpsready", "compare")
    for i, key in enumerate(keys):  # `tool = 5` must not end in an AttributeError
        table = table.get(key, {})
        if not isinstance(table, dict):
            raise UsageError(f"{path}: [{'.'.join(keys[:i + 1])}] must be a table")
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.mpsready.compare] must be a table")
    return table


def build_spec(config: Mapping[str, Any] | None = None, config_path: str | None = None,
               cli_patterns: Sequence[str] = (), rtol: float | None = None,
               atol: float | None = None) -> ToleranceSpec:
    """A :class:`ToleranceSpec` from a ``[tool.mpsready.compare]`` table and CLI values.

    Config keys: ``rtol``, ``atol`` and a ``tolerances`` table mapping an fnmatch
    pattern to ``[rtol, atol]`` or ``{rtol = ..., atol = ...}``. Raises :class:`UsageError`.
    """
    config = config or {}
    where = config_path or "pyproject.toml"
    spec = ToleranceSpec(config_path=config_path)
    if "rtol" in config:
        spec.config_rtol = _nonneg(config["rtol"], f"{where} rtol")
    if "atol" in config:
        spec.config_atol = _nonneg(config["atol"], f"{where} atol")
    table = config.get("tolerances", {})
    if not isinstance(table, dict):
        raise UsageError(f"{where}: [tool.mpsready.compare.tolerances] must be a table of PATTERN = [rtol, atol]")
    for pattern, value in table.items():
        if isinstance(value, dict) and set(value) == {"rtol", "atol"}:
            r, a = value["rtol"], value["atol"]
        elif isinstance(value, list) and len(value) == 2:
            r, a = value
        else:
            raise UsageError(f"{where}: tolerance for {pattern!r} must be [rtol, atol] or {{rtol=..., atol=...}}")
        spec.config_patterns.append(PatternTolerance(pattern, _nonneg(r, f"{where} {pattern} rtol"),
                                                     _nonneg(a, f"{where} {pattern} atol"), "pyproject.toml"))
    spec.cli_patterns = [parse_cli_pattern(t) for t in cli_patterns]
    spec.cli_rtol = None if rtol is None else _nonneg(rtol, "--rtol")
    spec.cli_atol = None if atol is None else _nonneg(atol, "--atol")
    return spec

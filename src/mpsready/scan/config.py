"""Scan settings: defaults, ``[tool.mpsready]`` in the scanned project's pyproject.toml, then the CLI.

Keys in ``[tool.mpsready]`` (all optional)::

    select = ["API", "DEP101"]      # codes or prefixes to report (default: all)
    ignore = ["API105"]             # codes or prefixes to drop
    fail-on = "degrades"            # blocker | degrades | info (exit 1 at or above)
    exclude = ["legacy/*"]          # fnmatch globs on paths relative to the project
    max-file-size = 5000000         # bytes; larger files are skipped with INP103 (may only lower the limit)
    per-file-ignores = {"tests/*" = ["API"], "scripts/*.py" = ["API101"]}   # codes or prefixes per fnmatch glob
    ignore-scopes = ["tests", "examples"]   # drop findings in these scopes (main, distributed, tests, docs,
                                            # examples, vendored; "demo"/"demos" mean examples)

``per-file-ignores`` and ``ignore-scopes`` narrow what is *reported* (``ignore-scopes`` the gate too), never what
is read: the static outlook is computed from every finding first, and the output says how many findings they
took out; a main-path finding that fails the gate and only the project's own filters hid still fails it. So do the
project's ``select``, ``ignore`` and ``exclude`` (issue 34: a project's ``exclude = ["train.py"]`` or
``ignore = ["API"]`` used to hide its CUDA code from the outlook, ``runs_on_mac``, exit 0): an excluded file is
still read for the outlook, its findings are not reported. The same options given on the command line are the
user's own choice and narrow what is read too.

The scanned project is untrusted input: its ``max-file-size`` may lower the per-file limit but never
raise it (a hostile pyproject.toml would otherwise switch the guard off); only the user's command line
(``--max-file-size``) raises it.

A code or prefix in ``select``/``ignore`` (here or on the command line) must be a registered rule code
(``API101``) or a documented prefix (``API``): anything else (``FOO``, ``API10``) is a usage error, so a
typo can never turn a CI gate off. Other bad entries become INP111 findings and the scan goes on.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpsready import rules as registry
from mpsready.errors import UsageError
from mpsready.findings import Severity
from mpsready.scan.rules import inputs as I
from mpsready.scan.sources import tomlfile
from mpsready.scan.sources.interface import RawFinding, short_repr

DEFAULT_MAX_FILE_SIZE = 5_000_000


@dataclass(frozen=True)
class ScanConfig:
    """Everything that changes what a scan reports. ``cache_dir=None`` disables the cache; ``jobs`` > 1
    analyses Python files in a process pool when there are many."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: Severity = Severity.BLOCKER
    exclude: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    cache_dir: Path | None = None
    jobs: int = 1
    read_project_config: bool = True
    gitignore: bool = True  # skip what the project's .gitignore files ignore
    problems: tuple[RawFinding, ...] = field(default=(), compare=False)  # bad [tool.mpsready] entries
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, codes or prefixes), report-only
    ignore_scopes: tuple[str, ...] = ()  # Scope values whose findings are not reported (the outlook still reads them)
    # the scanned project's own select / ignore / exclude: they narrow the report and the gate, never what is read
    # for the outlook (issue 34 item 5); the command line's select / ignore / exclude are the user's and narrow both
    report_select: tuple[str, ...] = ()
    report_ignore: tuple[str, ...] = ()
    report_exclude: tuple[str, ...] = ()

    def replace(self, **changes: Any) -> "ScanConfig":
        return dataclasses.replace(self, **changes)


def _codes(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip().upper() for v in value if v.strip())
    return None


def split_codes(values: list[str] | None) -> tuple[str, ...]:
    """Codes or prefixes from repeated, comma-separated command-line values (``["API101,api1", "DTY"]`` ->
    ``("API101", "API1", "DTY")``), upper-cased; validate them with :func:`check_codes`."""
    out: list[str] = []
    for v in values or []:
        out += [c.strip().upper() for c in v.split(",") if c.strip()]
    return tuple(out)


def check_codes(patterns: tuple[str, ...] | list[str], where: str) -> None:
    """Raise :class:`~mpsready.errors.UsageError` naming the first pattern that is neither a registered
    rule code nor a prefix of :data:`mpsready.rules.PREFIXES`; ``where`` says where it was given."""
    known = {r.code for r in registry.all_rules()}
    for p in patterns:
        if p not in known and p not in registry.PREFIXES:
            raise UsageError(f"{where}: unknown rule code or prefix {p!r}; give a code such as API101 or a "
                             f"prefix ({', '.join(registry.PREFIXES)}); `mpsready rules` lists them")


SCOPE_ALIASES = {"demo": "examples", "demos": "examples", "example": "examples", "test": "tests",
                 "doc": "docs", "third_party": "vendored", "vendor": "vendored"}


def scope_names(values: Any) -> tuple[str, ...] | None:
    """Scope names (``Scope`` values, or an alias of :data:`SCOPE_ALIASES`) from a list of strings; ``None``
    when ``values`` is not a list of strings or names an unknown scope."""
    from mpsready.findings import Scope

    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return None
    known = {s.value for s in Scope}
    out = []
    for v in values:
        name = SCOPE_ALIASES.get(v.strip().lower(), v.strip().lower())
        if name not in known:
            return None
        out.append(name)
    return tuple(out)


def per_file_ignores(value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    """``{glob: [codes]}`` as ``((glob, codes), ...)``; ``None`` when the shape is wrong. An unknown code or
    prefix raises :class:`~mpsready.errors.UsageError` (as in ``ignore``: a typo never turns a gate off)."""
    if not isinstance(value, dict):
        return None
    out = []
    for glob, codes_value in value.items():
        codes = _codes(codes_value)
        if not isinstance(glob, str) or not glob or codes is None:
            return None
        check_codes(codes, f"{where} {glob!r}")
        out.append((glob, codes))
    return tuple(out)


def with_project_config(config: ScanConfig, root: Path, explicit: set[str] | frozenset[str] = frozenset()) -> ScanConfig:
    """``config`` updated from ``root/pyproject.toml`` ``[tool.mpsready]``; fields named in ``explicit``
    (set on the command line) win. Bad entries become INP108/INP111 findings in ``config.problems``; an
    unknown rule code or prefix in ``select``/``ignore`` raises :class:`~mpsready.errors.UsageError`."""
    path = root / "pyproject.toml"
    if not config.read_project_config or not path.is_file():
        return config
    problems: list[RawFinding] = []
    try:
        if path.stat().st_size > config.max_file_size:
            return config  # INP103 comes from the walk
        doc = tomlfile.read(path.read_text(encoding="utf-8")).doc  # bounded in depth; never raises
    except (OSError, UnicodeDecodeError):
        return config  # reported by the walk / pyproject source
    if doc is None:
        return config  # INP108 comes from the pyproject source
    table = (doc.get("tool") or {}).get("mpsready") if isinstance(doc.get("tool"), dict) else None
    if table is not None and not isinstance(table, dict):  # `[tool] mpsready = 5`: say so, don't drop it silently
        return config.replace(problems=(RawFinding(I.MALFORMED_CONFIG, "pyproject.toml", None,
                                                   f"[tool.mpsready] = {short_repr(table)} ignored: expected a table"),))
    if not isinstance(table, dict):
        return config
    changes: dict[str, Any] = {}

    def bad(key: str, expected: str) -> None:
        problems.append(RawFinding(I.MALFORMED_CONFIG, "pyproject.toml", None,
                                   f"[tool.mpsready] {key} = {short_repr(table[key])} ignored: expected {expected}"))

    for key, value in table.items():
        norm = key.replace("_", "-")
        if norm in ("select", "ignore", "exclude"):
            codes = _codes(value)
            if codes is None:
                bad(key, "a list of strings")
                continue
            if norm != "exclude":
                check_codes(codes, f"{path} [tool.mpsready] {key}")
            if norm not in explicit:  # the project's own: report-only (ScanConfig.report_select and so on)
                changes["report_" + norm] = codes if norm != "exclude" else \
                    tuple(value if isinstance(value, list) else [value])
        elif norm == "per-file-ignores":
            pfi = per_file_ignores(value, f"{path} [tool.mpsready] {key}")
            if pfi is None:
                bad(key, 'a table of glob = ["CODE", ...]')
            elif "per_file_ignores" not in explicit:
                changes["per_file_ignores"] = pfi
        elif norm == "ignore-scopes":
            scopes = scope_names(value)
            if scopes is None:
                bad(key, "a list of scopes (main, distributed, tests, docs, examples, vendored)")
            elif "ignore_scopes" not in explicit:
                changes["ignore_scopes"] = scopes
        elif norm == "fail-on":
            try:
                sev = Severity.parse(str(value))
            except ValueError:
                bad(key, "blocker, degrades or info")
                continue
            if "fail_on" not in explicit:
                changes["fail_on"] = sev
        elif norm == "max-file-size":
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                bad(key, "a positive number of bytes")
            elif value > config.max_file_size:
                problems.append(RawFinding(I.MALFORMED_CONFIG, "pyproject.toml", None,
                                           f"[tool.mpsready] max-file-size = {value} ignored: the scanned project may "
                                           f"lower the {config.max_file_size}-byte limit, not raise it (use "
                                           "--max-file-size)"))
            elif "max_file_size" not in explicit:
                changes["max_file_size"] = value
        else:
            problems.append(RawFinding(I.MALFORMED_CONFIG, "pyproject.toml", None,
                                       f"[tool.mpsready] unknown key {short_repr(key)}"))
    return config.replace(**changes, problems=tuple(problems))

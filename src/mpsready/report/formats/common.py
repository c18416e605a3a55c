"""Wording shared by the renderers, so every format says the same thing."""

from __future__ import annotations

import sys

from mpsready.findings import Basis, Verdict
from mpsready.report.checklist import CheckItem, Status

MARK = {  # plain-text marks, for Markdown and the terminal
    "passed": "PASS", "passed (static review)": "PASS (static)", "passed (attested)": "PASS (attested)",
    "failed": "FAIL",
    "failed (predicted)": "FAIL (predicted)", "not checked (predicted to pass)": "NOT CHECKED (predicted pass)",
    "not checked": "NOT CHECKED",
}

VERDICT_BLURB = {
    Verdict.RUNS_ON_MAC: "Critical operators run on MPS, results meet the study's criteria, run time and memory "
                         "are acceptable.",
    Verdict.MAC_FOR_DEV: "The portable part runs on the Mac; training at scale, some extensions or the reference "
                         "runs stay on CUDA.",
    Verdict.STAY_ON_CUDA: "A required part is CUDA-only with no confirmed alternative, or results or time fail "
                          "the protocol.",
}


def css_class(item: CheckItem) -> str:
    if item.status is Status.PASSED:
        return "pass" if item.basis is Basis.OBSERVED or item.attested else "pass-static"
    if item.status is Status.FAILED:
        return "fail" if item.basis is Basis.OBSERVED else "fail-predicted"
    return "predicted" if item.prediction == "pass" else "unchecked"


def basis_word(basis: Basis | None) -> str:
    return {Basis.OBSERVED: "observed", Basis.PREDICTED: "predicted", None: "-"}[basis]


def seconds(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 1:
        return f"{s * 1000:.1f} ms"
    if s < 120:
        return f"{s:.2f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def gib(n: int | None) -> str:
    if n is None:
        return "-"
    if n < 2**30:
        return f"{n / 2**20:.1f} MiB"
    return f"{n / 2**30:.1f} GiB"


def spread(t) -> str:
    """The spread of a :class:`~mpsready.report.outlook.DeviceTiming`: ``"95.0 ms - 130.0 ms"``."""
    if not t.spread_seconds:
        return "-"
    low, high = t.spread_seconds
    return f"{seconds(low)} - {seconds(high)}"


def projected(t, job_steps: int | None) -> str:
    """The projection cell: the time, or why there is none."""
    if t.projected_seconds is not None:
        return seconds(t.projected_seconds)
    if job_steps and t.step_seconds is not None and not t.enough_steps:
        from mpsready.record.timing import MIN_MEASURED

        return f"- (needs {MIN_MEASURED} measured steps, has {t.steps_measured}; record with --steps {MIN_MEASURED + 1})"
    return "-"


def shown_path(path: str | None) -> str | None:
    """A path as a report shows it, never as an absolute local path: relative to the working directory
    when it lies below it, else its last two parts after ``.../``."""
    if not path:
        return path
    import os
    from pathlib import PurePath

    if not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        rel = None
    if rel is not None and not rel.startswith(".."):
        return rel
    parts = PurePath(path).parts[1:]
    return ".../" + "/".join(parts[-2:]) if parts else path


def project_name(path: str | None) -> str | None:
    """The project as the report's title names it, never where it lies on this machine: the package name in
    its ``pyproject.toml`` (``[project] name``, else ``[tool.poetry] name``) or ``setup.cfg`` (``[metadata]
    name``), else the folder of the repository holding it (the nearest folder at or above it with a
    ``.git``), else its own folder's name (``.`` resolved, so a scan of ``.`` is not named ``""``). A path
    that is not a folder here (a report built on another machine) gives its last part. The files are read as
    text (tomllib, configparser); nothing of the project is run."""
    if not path:
        return path
    from pathlib import Path

    p = Path(path)
    if not p.is_dir():
        return p.name or path
    p = p.resolve()
    name = _package_name(p)
    if name:
        return name
    for folder in (p, *p.parents):
        if (folder / ".git").exists():
            return folder.name or p.name
    return p.name or path


def _package_name(folder: object) -> str | None:
    import configparser
    from pathlib import Path

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    root = Path(str(folder))
    try:
        doc = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
        for name in (doc.get("project", {}).get("name"), doc.get("tool", {}).get("poetry", {}).get("name")):
            if isinstance(name, str) and name.strip():
                return name.strip()[:100]
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
        pass
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string((root / "setup.cfg").read_text(encoding="utf-8"))
        name = cfg.get("metadata", "name", fallback=None)
        if name and name.strip():
            return name.strip()[:100]
    except (OSError, UnicodeDecodeError, configparser.Error):
        pass
    return None


def shown_inputs(inputs: dict) -> dict:
    """:func:`shown_path` applied to every input file of a report (a stage -> path or list of paths)."""
    return {k: ([shown_path(p) for p in v] if isinstance(v, list) else shown_path(v)) for k, v in inputs.items()}


PLOTS_SKIPPED_NO_MATPLOTLIB = "Plots skipped: matplotlib is not installed (pip install 'mpsready[report]')."
PLOTS_NOTHING = "No plots: nothing to draw (no findings, losses or compared layers)."

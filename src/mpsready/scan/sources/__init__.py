"""Declaration sources: one module per kind of file, each a :class:`~.interface.DependencySource`.

The readers are registered in :func:`all_sources` and imported when it is first called, not with this package:
a scan of Python files alone (a 1-file scan, a pre-commit hook) reads no declaration and so loads none of
them, nor what they import (``packaging``, ``tomllib``, ``yaml``). ``ALL_SOURCES`` is that tuple too.
"""

from __future__ import annotations

import functools

from mpsready.scan.sources.interface import Dependency, DependencySource, ProjectFiles, RawFinding, SourceResult


# the readers' names in all_sources()' order (a test keeps the two equal): DEP110 lists what was looked for
# without loading a reader
SOURCE_NAMES = ("requirements", "pyproject", "setup.py", "setup.cfg", "conda environment", "Pipfile", "lock file",
                "Dockerfile", "shell script", "notebook")


@functools.lru_cache(maxsize=1)
def all_sources() -> tuple[DependencySource, ...]:
    """Every declaration reader, in the order the engine tries them on a file."""
    from mpsready.scan.sources.conda import CondaSource
    from mpsready.scan.sources.dockerfile import DockerfileSource
    from mpsready.scan.sources.lockfiles import LockfileSource
    from mpsready.scan.sources.notebook import NotebookSource
    from mpsready.scan.sources.pipfile import PipfileSource
    from mpsready.scan.sources.pyproject import PyprojectSource
    from mpsready.scan.sources.requirements import RequirementsSource
    from mpsready.scan.sources.setup_cfg import SetupCfgSource
    from mpsready.scan.sources.setup_py import SetupPySource
    from mpsready.scan.sources.shell import ShellScriptSource

    return (
        RequirementsSource(), PyprojectSource(), SetupPySource(), SetupCfgSource(), CondaSource(), PipfileSource(),
        LockfileSource(), DockerfileSource(), ShellScriptSource(), NotebookSource(),
    )


def __getattr__(name: str) -> tuple[DependencySource, ...]:
    if name == "ALL_SOURCES":
        return all_sources()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ALL_SOURCES", "SOURCE_NAMES", "Dependency", "DependencySource", "ProjectFiles", "RawFinding",
           "SourceResult", "all_sources"]

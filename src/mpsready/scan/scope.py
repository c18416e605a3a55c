"""Which part of a project a path belongs to (``main``, ``tests``, ``docs``, ``examples``, ``vendored``,
``distributed``), from its directory and file names. Findings outside ``main`` are weighted apart."""

from __future__ import annotations

import functools

from mpsready.findings import Scope

_DIRS = (
    (Scope.VENDORED, {"third_party", "thirdparty", "3rdparty", "third-party", "vendor", "vendored", "_vendor", "external",
                      "extern", "externals", "site-packages"}),
    (Scope.TESTS, {"tests", "test", "testing", "unittests", "unit_tests", "integration_tests"}),
    (Scope.DOCS, {"docs", "doc", "documentation", "sphinx", "docs_src"}),
    (Scope.EXAMPLES, {"examples", "example", "demo", "demos", "tutorials", "tutorial", "samples", "sample",
                      "benchmarks", "benchmark", "playground", "sandbox"}),
    (Scope.DISTRIBUTED, {"distributed", "ddp", "multi_gpu", "multigpu", "multi-gpu", "slurm", "launchers", "launcher"}),
)


@functools.lru_cache(maxsize=8192)  # asked once per finding, and a file has many
def scope_of(relpath: str) -> Scope:
    """Scope of a POSIX path relative to the scan root (``tests/test_x.py`` -> ``tests``)."""
    parts = relpath.lower().split("/")
    dirs, name = parts[:-1], parts[-1]
    for scope, names in _DIRS:
        if any(d in names for d in dirs):
            return scope
    if name.startswith("test_") and name.endswith(".py") or name.endswith("_test.py") \
            or name in ("conftest.py", "test.py", "tests.py"):
        return Scope.TESTS
    if name.startswith(("launch_", "run_ddp", "train_ddp", "ddp_")) or name.endswith(("_ddp.py", "_distributed.py")):
        return Scope.DISTRIBUTED
    return Scope.MAIN

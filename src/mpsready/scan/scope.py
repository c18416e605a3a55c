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
    (Scope.DISTRIBUTED, {"distributed", "ddp", "fsdp", "multi_gpu", "multigpu", "multi-gpu", "slurm", "launchers",
                         "launcher"}),
)


# Files named like tests (``add_test.py``) that are the project's scripts, for the scan under way (set_scripts)
_SCRIPTS: frozenset[str] = frozenset()


def scope_of(relpath: str) -> Scope:
    """Scope of a POSIX path relative to the scan root (``tests/test_x.py`` -> ``tests``); a file named like a
    test that the scan found to be a script (:func:`scripts_named_like_tests`) is ``main``."""
    if relpath in _SCRIPTS:
        return Scope.MAIN
    return _path_scope(relpath)


def scripts_named_like_tests(results) -> frozenset[str]:
    """The files of ``results`` (relpath -> (CodeResult, cells)) that only their name puts in ``tests``
    (``test_*.py``, ``*_test.py`` outside a tests folder) but that run as programs (an ``if __name__ ==
    "__main__":`` block, or a script's module-level calls) and define no test (no function or method named
    ``test*``): locuslab/TCN's entry points
    are ``add_test.py``, ``char_cnn_test.py``... , which the README runs with ``python add_test.py``. "Runs as a
    program" is the analyzer's ``entry``: a ``__main__`` block or module-level calls beyond set-up."""
    out = set()
    for rel, (res, _cells) in results.items():
        name = rel.rsplit("/", 1)[-1].lower()
        if not (name.startswith("test_") or name.endswith("_test.py")) or _path_scope(rel) is not Scope.TESTS:
            continue
        if any(d in dict(_DIRS)[Scope.TESTS] for d in rel.lower().split("/")[:-1]):
            continue  # in a tests folder: a test module, whatever it runs
        if res.entry and not any(span.name.startswith("test") for span in res.def_spans):
            out.add(rel)
    return frozenset(out)


def set_scripts(paths: frozenset[str]) -> None:
    """The test-named scripts of the scan under way (``frozenset()`` when it ends)."""
    global _SCRIPTS
    _SCRIPTS = paths


@functools.lru_cache(maxsize=8192)  # asked once per finding, and a file has many
def _path_scope(relpath: str) -> Scope:
    parts = relpath.lower().split("/")
    dirs, name = parts[:-1], parts[-1]
    for scope, names in _DIRS:
        if any(d in names for d in dirs):
            return scope
    if name.startswith("test_") and name.endswith(".py") or name.endswith("_test.py") \
            or name in ("conftest.py", "test.py", "tests.py"):
        return Scope.TESTS
    # issue 32, round 9: FSDP (fully sharded data parallel) variants too (`train_fsdp.py`, `x_batched_fsdp.py`)
    if name.startswith(("launch_", "run_ddp", "train_ddp", "ddp_", "fsdp_", "run_fsdp", "train_fsdp")) \
            or name.endswith(("_ddp.py", "_distributed.py", "_fsdp.py")):
        return Scope.DISTRIBUTED
    return Scope.MAIN

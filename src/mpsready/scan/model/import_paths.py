"""Where an absolute import of the main path finds its module (issue 32, round 13): the program's ``sys.path``.

The import graph (:func:`mpsready.scan.model.graph._reach`) resolved an absolute import from the scan root, and, in a
folder that is no package, from the importing file's own folder. Python resolves it from ``sys.path``, whose first
entry is the folder of the script that was run (Python 3 documentation, "The Module Search Path": "the directory
containing the input script"), for every module that script imports, however deep: ``cd sub && python run.py`` with
``run.py`` importing ``exp.exp_main``, which imports ``from exp.exp_basic import Exp_Basic``, finds
``sub/exp/exp_basic.py``. Before this round the second import was looked up as ``sub/exp/exp/exp_basic.py``, missed,
and every file below the entry's first import was judged off the main path: a collection of per-task folders run by
the README's ``cd X && sh scripts/Y.sh`` had no limit at all (a verdict better than the files read support).

Two rules:

- **The entry's folder**: a main entry that is a script outside a package (its folder holds no ``__init__.py``) puts
  its folder first on ``sys.path``, and every module reached from it resolves absolute imports there too
  (:func:`script_folder`, :func:`based`).
- **An import left unresolved is every candidate** (:func:`candidates`): an absolute import that neither the root,
  the importing file's folder nor the entry's folder resolves, whose dotted name ends a module path of the project in
  the same top-level folder as the importing file (``from exp.exp_basic import X`` against ``task/exp/exp_basic.py``),
  reaches each such module: a path added at run time (``sys.path.insert(0, ...)``) or a working folder the scan cannot
  see may be what resolves it, and a limit must not be dropped because the scan failed to resolve the import that
  reaches it. Standard-library names (:data:`sys.stdlib_module_names`, Python 3.10+) never are.
"""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))


def script_folder(rel: str, results: Mapping[str, Any]) -> str:
    """The dotted folder that running ``rel`` as a script puts first on ``sys.path``: its folder when that folder is
    no package (``task/run.py`` -> ``task``); ``""`` for a root script, a package module (run with ``-m`` from the
    root, or imported) and anything else (the root resolves it already)."""
    folder = posixpath.dirname(rel)
    if not folder or not rel.endswith(".py") or posixpath.join(folder, "__init__.py") in results:
        return ""
    return ".".join(PurePosixPath(folder).parts)


def based(base: str, full: str, names: Iterable[str]) -> list[str]:
    """The modules ``import full`` / ``from full import names`` may name from the folder ``base`` on ``sys.path``."""
    if not base or not full:
        return []
    mod = f"{base}.{full}"
    return [mod, *(f"{mod}.{n}" for n in names if n not in ("*", "**"))]


def by_last(modules: Iterable[str]) -> dict[str, list[str]]:
    """The project's dotted module names by their last part (``task.exp.exp_basic`` under ``exp_basic``): the index
    :func:`candidates` looks a name up in, built once per reach."""
    out: dict[str, list[str]] = {}
    for m in modules:
        out.setdefault(m.rsplit(".", 1)[-1], []).append(m)
    return out


def candidates(index: Mapping[str, list[str]], full: str, names: Iterable[str], rel: str) -> list[str]:
    """The modules an unresolved absolute import may be (see the module doc): those whose dotted name ends with
    ``.full`` (or ``.full.name`` for a name imported from it) in the importing file's top-level folder; ``index``
    is :func:`by_last` of the project's modules."""
    if not full or full.split(".")[0] in _STDLIB:
        return []
    top = rel.split("/", 1)[0] + "." if "/" in rel else ""
    out = []
    for tail in (full, *(f"{full}.{n}" for n in names if n not in ("*", "**"))):
        last = tail.rsplit(".", 1)[-1]
        out += [m for m in index.get(last, ()) if m.startswith(top) and m.endswith("." + tail)]
    return sorted(set(out))


# folders of example programs (a subset of the scope's EXAMPLES folders: benchmarks, playgrounds and sandboxes are no
# way of running the project's main work)
_EXAMPLE_FOLDERS = frozenset({"examples", "example", "demo", "demos", "tutorials", "tutorial", "samples", "sample"})


def example_program(rel: str) -> bool:
    """Whether ``rel`` is a Python file under an example folder (``examples/images/train.py``): in a project with no
    main entry at all (no root script, README command or import, console script), such programs are how it runs, so
    their limits count (round 13: a library whose only training script is an example was called ``runs_on_mac``)."""
    parts = rel.split("/")
    return rel.endswith(".py") and any(p.lower() in _EXAMPLE_FOLDERS for p in parts[:-1])

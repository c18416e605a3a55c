"""Load an ENTRY (``package.module:function`` or ``path/to/file.py:function``).

Loading imports the user's module, so it runs their code: only ``trace``, ``record``
and ``check --entry`` do this, never ``scan``.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from mpsready.errors import UsageError


class EntryError(UsageError):
    """The ENTRY string is malformed, or its module or function cannot be found."""


@dataclass(frozen=True)
class Entry:
    spec: str  # as the user wrote it
    function: Callable[..., Any]
    root: Path  # the project directory: frames under it are "user code"
    source_file: Path | None

    def call(self, device: str) -> Any:
        """Call the entry function, passing ``device=`` if it accepts that keyword."""
        try:
            params: Mapping[str, inspect.Parameter] = inspect.signature(self.function).parameters
        except (TypeError, ValueError):
            params = {}
        if "device" in params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
            return self.function(device=device)
        return self.function()


def split_spec(spec: str) -> tuple[str, str]:
    """``"a/b.py:fn"`` -> ``("a/b.py", "fn")``; raises :class:`EntryError` if there is no ``:function``."""
    target, sep, func = spec.rpartition(":")
    # A Windows drive letter ("C:\\x.py") has no function part after it.
    if not sep or not target or not func or not func.replace("_", "a").replace(".", "a").isalnum():
        raise EntryError(f"ENTRY must look like 'package.module:function' or 'path/file.py:function', got {spec!r}")
    return target, func


def load_entry(spec: str, cwd: str | os.PathLike[str] | None = None) -> Entry:
    """Import the module named by ``spec`` and return its function.

    Raises :class:`EntryError` for a malformed spec, a missing file or module, or a
    missing or non-callable attribute. An exception raised while importing the
    user's module propagates unchanged (it is the user's error, with their traceback).
    """
    target, func_name = split_spec(spec)
    base = Path(cwd or os.getcwd()).resolve()
    if target.endswith(".py") or os.sep in target or "/" in target:
        path = (base / target).resolve()
        if not path.is_file():
            raise EntryError(f"entry file not found: {path}")
        root = path.parent
        _prepend_path(root)
        mod_name = f"_mpsready_entry_{path.stem}"
        mod_spec = importlib.util.spec_from_file_location(mod_name, path)
        if mod_spec is None or mod_spec.loader is None:
            raise EntryError(f"cannot import {path}")
        module = importlib.util.module_from_spec(mod_spec)
        sys.modules[mod_name] = module
        mod_spec.loader.exec_module(module)
        source: Path | None = path
    else:
        _prepend_path(base)
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as exc:
            if exc.name and target.startswith(exc.name):
                raise EntryError(f"module {target!r} not found (looked in {base} and sys.path)") from None
            raise
        file = getattr(module, "__file__", None)
        source = Path(file).resolve() if file else None
        root = base
        if source is not None and base not in source.parents:
            root = source.parent
    obj: Any = module
    for part in func_name.split("."):
        if not hasattr(obj, part):
            raise EntryError(f"{target} has no attribute {func_name!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise EntryError(f"{spec} is not callable")
    return Entry(spec=spec, function=obj, root=root, source_file=source)


def _prepend_path(p: Path) -> None:
    s = str(p)
    if s not in sys.path:
        sys.path.insert(0, s)

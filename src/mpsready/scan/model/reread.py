"""The project's sources read again after the per-file analysis, each read and parsed at most once per scan.

Three project-model passes look at call sites the per-file summaries do not keep: the options a caller tests
(:mod:`mpsready.scan.model.callers`), the device arguments calls pass (:mod:`mpsready.scan.model.call_sites`)
and the try/except around the calls of an extension's wrapper (``engine._resolve_fallbacks``). They share one
:class:`SourceTrees`, so a file two passes need is read and parsed once.
"""

from __future__ import annotations

import ast
import warnings
from typing import Callable


class SourceTrees:
    """Texts and syntax trees of project files by relative path; ``read_text`` returns a file's text and may
    raise (a file that vanished or turned unreadable since the walk)."""

    def __init__(self, read_text: Callable[[str], str]) -> None:
        self._read = read_text
        self._texts: dict[str, str | None] = {}
        self._trees: dict[str, ast.Module | None] = {}

    def text(self, rel: str) -> str | None:
        """The file's text, or ``None`` when it cannot be read now."""
        if rel not in self._texts:
            try:
                self._texts[rel] = self._read(rel)
            except Exception:  # SourceError, OSError: vanished or unreadable since the scan read it
                self._texts[rel] = None
        return self._texts[rel]

    def tree(self, rel: str) -> ast.Module | None:
        """The file's syntax tree, or ``None`` when it cannot be read or parsed (its uses are then unknown)."""
        if rel not in self._trees:
            text = self.text(rel)
            tree = None
            if text is not None:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        tree = ast.parse(text)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    tree = None
            self._trees[rel] = tree
        return self._trees[rel]

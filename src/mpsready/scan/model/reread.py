"""The project's sources as the project-model passes read them: each file read and parsed at most once per scan.

Four project-model passes look at call sites the per-file summaries do not keep: the options a caller tests
(:mod:`mpsready.scan.model.callers`), the device arguments calls pass (:mod:`mpsready.scan.model.call_sites`),
the try/except around the calls of an extension's wrapper (:mod:`mpsready.scan.model.fallbacks`) and the core use of an
imported CUDA package (:mod:`mpsready.scan.model.core`). They share one :class:`SourceTrees`. When the Python
analysis ran in this process, the engine hands it the texts and trees that analysis parsed
(:data:`mpsready.scan.engine.KEEP_TREES_BYTES` bounds how much is kept), so those files are not read or parsed
again; the others (a cache hit, a file analysed in a pool worker) are read and parsed here, once.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable, Mapping

from mpsready.scan.code.triggers import name_lines


class SourceTrees:
    """Texts and syntax trees of project files by relative path; ``read_text`` returns a file's text and may
    raise (a file that vanished or turned unreadable since the walk). ``parsed`` maps a relative path to the
    (text, tree) the analysis already made of it, where that text is what ``read_text`` returns (UTF-8)."""

    def __init__(self, read_text: Callable[[str], str],
                 parsed: Mapping[str, tuple[str, ast.Module]] | None = None) -> None:
        self._read = read_text
        self._texts: dict[str, str | None] = {}
        self._trees: dict[str, ast.Module | None] = {}
        for rel, (text, tree) in (parsed or {}).items():
            self._texts[rel] = text
            self._trees[rel] = tree

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

    def lines(self, rel: str, names: tuple[str, ...]) -> list[int] | None:
        """Sorted 1-based numbers of the lines of the file that hold one of ``names`` as a whole word, or ``None``
        when that cannot bound where the tree names them (an unreadable file; a lone ``\\r``, which ``ast`` counts
        as a line break); in non-ASCII text every line with a non-ASCII character too (:func:`name_lines`). A pass
        looking for uses of ``names`` needs to enter only the statements that span one of these lines."""
        text = self.text(rel)
        if text is None:
            return None
        return name_lines(text, names)


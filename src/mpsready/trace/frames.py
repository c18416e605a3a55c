"""Find the innermost frame of the user's project on the Python stack, cheaply.

``traceback.extract_stack`` formats every frame and reads source lines: far too slow
to call for each aten op. Instead walk ``sys._getframe()`` and decide once per code
object whether it belongs to the user's project (a file under the entry's root that is
not inside ``site-packages``, PyTorch or mpsready itself). The walk then costs a dict
lookup per frame.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import CodeType

from mpsready.trace.model import Frame

_EXCLUDED_PARTS = ("site-packages", "dist-packages")
_STOP = "\0stop"  # classification of the step runner's frames


def _package_dir(name: str) -> str | None:
    mod = sys.modules.get(name)
    f = getattr(mod, "__file__", None)
    return os.path.dirname(os.path.abspath(f)) + os.sep if f else None


class UserFrames:
    """``locate()`` returns the innermost user :class:`Frame` on the current stack, or ``None``.

    ``root`` is the project directory (``Entry.root``), or several directories (the entry's own
    directory and the project it exercises, when the ENTRY file is kept outside the project);
    frames in files under any of them count as the user's, except files inside
    ``site-packages``/``dist-packages`` (a virtual environment kept in the project), PyTorch and
    mpsready. A frame's path is relative to the first root that holds it.
    """

    def __init__(self, root: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]):
        roots = [root] if isinstance(root, (str, os.PathLike)) else list(root)
        self.roots = list(dict.fromkeys(os.path.abspath(os.fspath(r)) + os.sep for r in roots))
        self.root = self.roots[0]
        self._excluded = [d for d in (_package_dir("torch"), _package_dir("mpsready")) if d]
        # The step runner calls the user's step: the walk stops there (pytest or a CLI below it can be
        # dozens of frames deep, and none of them is the step).
        mps = _package_dir("mpsready")
        self._stop_dir = os.path.join(mps, "step") + os.sep if mps else None
        self._is_user: dict[CodeType, str | None] = {}  # code -> path relative to root, None, or _STOP
        self._frames: dict[tuple[CodeType, int], Frame] = {}

    def _classify(self, code: CodeType) -> str | None:
        filename = code.co_filename
        if filename.startswith("<"):
            return None
        if self._stop_dir and os.path.abspath(filename).startswith(self._stop_dir):
            return _STOP
        path = os.path.abspath(filename)
        root = next((r for r in self.roots if path.startswith(r)), None)
        if root is None:
            return None
        if any(path.startswith(d) for d in self._excluded):
            return None
        parts = Path(path).parts
        if any(p in _EXCLUDED_PARTS for p in parts):
            return None
        return os.path.relpath(path, root)

    def locate(self, skip: int = 1) -> Frame | None:
        f = sys._getframe(skip)
        is_user = self._is_user
        while f is not None:
            code = f.f_code
            rel = is_user.get(code, False)
            if rel is False:
                rel = is_user[code] = self._classify(code)
            if rel is _STOP:
                return None  # reached the step runner: frames further out called mpsready, not the step
            if rel is not None:
                key = (code, f.f_lineno)
                fr = self._frames.get(key)
                if fr is None:
                    fr = self._frames[key] = Frame(rel, f.f_lineno, code.co_name)
                return fr
            f = f.f_back
        return None

"""Where in the user's program a call was made: :class:`Frame` (a file and line of the user's project) and
:class:`UserFrames`, which finds the innermost such frame on the Python stack, cheaply.

Shared by every stage that runs the user's program (the trace recorder, the emulated MPS device, the numerics
watches), so none of them imports another's package for it.

``traceback.extract_stack`` formats every frame and reads source lines: far too slow
to call for each aten op. Instead walk ``sys._getframe()`` and decide once per code
object whether it belongs to the user's project (a file under the entry's root that is
not inside ``site-packages``, PyTorch or mpsready itself). The walk then costs a dict
lookup per frame.

What is PyTorch's or mpsready's is decided by identity, never by a name in the path: a file is PyTorch's when
it lies in the directory of the loaded ``torch`` module's own file (and mpsready's likewise), both as written
and with symbolic links resolved, compared as whole path components (:class:`ProjectFiles`). A project kept in
a folder named ``mpsready``, ``torch`` or ``step`` (``git clone`` names the folder after the repository) is the
user's like any other.
"""

from __future__ import annotations

import inspect
import os
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType
from typing import Any, Mapping, cast


@dataclass(frozen=True)
class Frame:
    """The innermost frame of the user's project that led to an op: ``path`` is relative
    to the project root when it lies under it, ``line`` is 1-based."""

    path: str
    line: int
    function: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "function": self.function}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Frame":
        return cls(d["path"], int(d["line"]), d["function"])



_EXCLUDED_PARTS = ("site-packages", "dist-packages")
_STOP = "\0stop"  # classification of the step runner's frames
_SKIP = "\0skip"  # not the user's, and never an anchor (UserFrames)
# Code objects whose frames are resumed by different callers over their life: never anchors.
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
# Frames PyTorch creates for every dispatched op (the dispatch-mode plumbing and its dynamo shim), relative to
# the torch package's directory: a fresh frame per call can never match the anchor, so the first frame outside
# them is taken instead.
_PER_CALL = (("_compile.py",), ("_ops.py",), ("_dynamo", "eval_frame.py"), ("utils", "_python_dispatch.py"))


def dispatch_plumbing_files() -> tuple[str, ...]:
    """The files of :data:`_PER_CALL` in the loaded ``torch`` (both :func:`_forms` of its directory); empty when
    torch is not loaded. For stages that skip these frames without a :class:`UserFrames`."""
    return tuple(os.path.join(d, *p) for d in package_dirs("torch") for p in _PER_CALL)


def _forms(path: str) -> tuple[str, ...]:
    """``path`` made absolute, as written and with symbolic links resolved (one entry when they agree)."""
    a = os.path.abspath(path)
    r = os.path.realpath(a)
    return (a,) if r == a else (a, r)


def package_dirs(name: str) -> tuple[str, ...]:
    """The directory of the loaded module ``name``'s own file, in both :func:`_forms`, each ending with the
    separator (so a prefix test compares whole path components); empty when it is not loaded or has no file.
    ``torch`` and ``mpsready`` are found this way, never by a folder's name."""
    mod = sys.modules.get(name)
    f = getattr(mod, "__file__", None)
    return tuple(d + os.sep for d in _forms(os.path.dirname(f))) if f else ()


def under(path: str, dirs: Sequence[str]) -> bool:
    """Whether ``path`` (either of its :func:`_forms`) lies in one of ``dirs`` (each ending with the separator)."""
    return any(p.startswith(tuple(dirs)) for p in _forms(path)) if dirs else False


def _site_dirs() -> tuple[str, ...]:
    """The running interpreter's own package directories (site-packages and the like), separator-terminated."""
    import site
    import sysconfig

    found: list[str] = []
    try:
        found += site.getsitepackages()
    except AttributeError:  # some embedded interpreters have no getsitepackages
        pass
    found.append(site.getusersitepackages())
    paths = sysconfig.get_paths()
    found += [paths[k] for k in ("purelib", "platlib") if k in paths]
    return tuple(dict.fromkeys(d + os.sep for f in found if f for d in _forms(f)))


class ProjectFiles:
    """Which source files are the user's project: those under one of ``roots`` that are neither PyTorch's nor
    mpsready's (by the loaded packages' own directories, :func:`package_dirs`), nor an installed package's (in
    the interpreter's site directories, unless the root itself is there, or in a ``site-packages`` or
    ``dist-packages`` folder inside the root: a virtual environment kept in the project). Only whole path
    components below the root are compared with those two names, so the folders that hold the project can be
    called anything."""

    def __init__(self, roots: Sequence[str | os.PathLike[str]]):
        self.roots = list(dict.fromkeys(os.path.abspath(os.fspath(r)) + os.sep for r in roots))
        # each root in both forms, paired with the root its relative paths are taken from
        self._forms = [f + os.sep for r in self.roots for f in _forms(r[:-1])]
        self.torch = package_dirs("torch")
        self.mpsready = package_dirs("mpsready")
        self._site = _site_dirs()

    def library(self, filename: str) -> bool:
        """Whether ``filename`` is PyTorch's or mpsready's own."""
        return under(filename, self.torch + self.mpsready)

    def relative(self, filename: str) -> str | None:
        """``filename`` relative to the first root that holds it when it is the user's; ``None`` otherwise."""
        if filename.startswith("<") or self.library(filename):
            return None
        for form in _forms(filename):
            for root in self._forms:
                if not form.startswith(root):
                    continue
                rel = form[len(root):]
                if any(p in _EXCLUDED_PARTS for p in Path(rel).parts[:-1]):
                    return None
                if form.startswith(self._site) and not root.startswith(self._site):
                    return None
                return rel
        return None


def user_location(exc: BaseException, root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The innermost frame of ``exc``'s traceback in the user's files (:class:`ProjectFiles` of ``root``):
    ``{"path": relative to root, "line", "function"}``, or ``None``."""
    files = ProjectFiles([root])
    for fs in reversed(traceback.extract_tb(exc.__traceback__)):
        rel = files.relative(fs.filename)
        if rel is not None:
            return {"path": rel, "line": fs.lineno, "function": fs.name}
    return None


class UserFrames:
    """``locate()`` returns the innermost user :class:`Frame` on the current stack, or ``None``.

    ``root`` is the project directory (``Entry.root``), or several directories (the entry's own
    directory and the project it exercises, when the ENTRY file is kept outside the project);
    frames in files under any of them count as the user's, except files inside
    ``site-packages``/``dist-packages`` (a virtual environment kept in the project), PyTorch and
    mpsready. A frame's path is relative to the first root that holds it.

    The walk is cached. Ops dispatched from the same Python call (the many ops of one
    ``F.multi_head_attention_forward``, every op of a backward pass) share the frames from their
    innermost non-user caller outwards, and while that frame is on the stack the frames outside it are
    suspended in calls, so their lines cannot change. ``locate`` remembers the first such frame of its
    last walk (the *anchor*; a plain function frame, since a generator's frame can be resumed from
    elsewhere) with the result, and returns that result when a walk meets the same frame object again.
    The anchor is held until the next walk that misses it, or :meth:`forget`.
    """

    def __init__(self, root: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]):
        roots = [root] if isinstance(root, (str, os.PathLike)) else list(root)
        self.files = ProjectFiles(roots)
        self.roots = self.files.roots
        self.root = self.roots[0]
        # The step runner calls the user's step: the walk stops there (pytest or a CLI below it can be
        # dozens of frames deep, and none of them is the step).
        self._stop_dirs = tuple(os.path.join(d, "step") + os.sep for d in self.files.mpsready)
        self._per_call = tuple(os.path.join(d, *p) for d in self.files.torch for p in _PER_CALL)
        # code -> path relative to root; None (not the user's, may anchor), _SKIP or _STOP
        self._is_user: dict[CodeType, str | None] = {}
        self._frames: dict[tuple[CodeType, int], Frame] = {}
        self._anchor: FrameType | None = None
        self._anchored: Frame | None = None

    def forget(self) -> None:
        """Drop the cached anchor frame (it keeps that call's locals alive)."""
        self._anchor = self._anchored = None

    def _classify(self, code: CodeType) -> str | None:
        """The user path of ``code`` (relative to the root), or None / _SKIP / _STOP (class docstring)."""
        filename = code.co_filename
        if filename.startswith("<"):
            return _SKIP if code.co_flags & _RESUMABLE else None
        if under(filename, self._stop_dirs):
            return _STOP
        rel = self.files.relative(filename)
        if rel is None and (code.co_flags & _RESUMABLE or any(f in self._per_call for f in _forms(filename))):
            return _SKIP
        return rel

    def owns(self, code: CodeType) -> bool:
        """Whether ``code`` is the user's (the classification :meth:`locate` uses, from the same cache)."""
        rel = self._is_user.get(code, False)
        if rel is False:
            rel = self._is_user[code] = self._classify(code)
        return rel is not None and rel is not _SKIP and rel is not _STOP

    def locate(self, skip: int = 1) -> Frame | None:
        f: FrameType | None = sys._getframe(skip)
        is_user = self._is_user
        anchor = self._anchor
        first = None  # the first frame of this walk that may anchor the next one
        result = None
        while f is not None:
            if f is anchor:
                return self._anchored
            code = f.f_code
            rel = is_user.get(code, False)
            if rel is False:
                rel = is_user[code] = self._classify(code)
            if rel is None:
                if first is None:
                    first = f
            elif rel is _STOP:
                break  # reached the step runner: frames further out called mpsready, not the step
            elif rel is not _SKIP:
                key = (code, f.f_lineno)
                result = self._frames.get(key)
                if result is None:
                    result = self._frames[key] = Frame(cast(str, rel), f.f_lineno, code.co_name)
                break
            f = f.f_back
        self._anchor, self._anchored = first, result
        return result

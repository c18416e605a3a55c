"""Keep hostile sources away from libcst: a cheap nesting estimate before parsing, and a guarded parse.

libcst's native parser recurses once per level of nesting on the C stack: a source nested a few thousand
levels deep (5,000 brackets, 10,000 ``+``) overflows it and kills the process (SIGSEGV, exit 139, measured
with libcst 1.x on CPython 3.11, 8 MiB main-thread stack); its Python half (metadata, visitors, code
generation) raises ``RecursionError`` from about 150 nested brackets. One such file must not stop the
migration of a tree: :func:`check_nesting` estimates the depth of the tree libcst would build from the
tokens alone (``tokenize``, linear, no recursion, works on text that is not valid Python) and
:func:`parse_guarded` parses only what passes, on a thread of its own with a fixed stack, so the margin
does not depend on the caller's thread or platform (Windows' main thread has 1 MiB).

The estimate, per token, is ``5 x bracket depth + chain + 5 x indentation + 2 x elif run``:

- *brackets*: each ``(``/``[``/``{`` costs 5 (the native parser's frames per bracket level are several
  times those of an operator: 2,000 nested brackets overflow the 8 MiB stack where 5,000 ``+`` do not).
  CPython itself refuses more than 200 (``SyntaxError: too many nested parentheses``, Parser/tokenizer.c
  ``MAXLEVEL``), so any file Python can run stays at or under 1,000 from brackets alone.
- *chain*: tokens since the last ``,``/``:``/``;`` at the same bracket level (operators, names, dots,
  adjacent strings): ``a + b + c`` and ``a or b or c`` and ``"a" "b" "c"`` nest one node per link in
  libcst, while the items of a list are siblings (a 50,000-item list literal passes).
- *indentation*: CPython refuses more than 100 levels (``IndentationError: too many levels of
  indentation``, ``MAXINDENT``).
- *elif run*: libcst nests each ``elif`` in the previous one's ``orelse``.
- *lambdas*: 2 per lambda whose body is still open at the bracket level, and a lambda's ``:`` does not end
  the chain (``lambda: lambda: ... 0`` nests one node per lambda; the colon used to reset the estimate, so
  3,000 of them passed the guard and exhausted libcst's memory).

A source whose estimate exceeds :data:`LIMIT` is refused before libcst sees it; below it a
``RecursionError`` of libcst's Python half is caught by the caller (:mod:`mpsready.migrate.source`)
and the file is listed as not parsed too.
"""

from __future__ import annotations

import io
import os
import queue
import re
import sys
import threading
import tokenize
from collections.abc import Callable
from typing import TypeVar

from mpsready.migrate.interface import MigrateError

LIMIT = 1000
BRACKET = 5
INDENT = 5
ELIF = 2
LAMBDA = 2  # per open lambda body: libcst nests each lambda's body in it (a chain of 3,000 exhausted memory)
STACK_BYTES = 256 * 1024 * 1024  # reserved address space; pages are touched only as deep as the parse goes

_OPEN, _CLOSE = "([{", ")]}"
_SIBLING = {",", ":", ";"}
_SKIP = {tokenize.NL, tokenize.COMMENT, tokenize.ENCODING, tokenize.ENDMARKER}

T = TypeVar("T")


def nesting(text: str) -> tuple[int, int]:
    """``(estimate, line)``: the largest nesting estimate of ``text`` (see the module docstring) and the
    1-based line where it is reached (0 for an empty text). Tokenizer errors end the estimate where they
    occur (libcst then reports the syntax error itself)."""
    best, best_line = 0, 0
    runs = [0]  # chain length per open bracket level, outermost first
    lams = [0]  # lambdas whose body is still open, per bracket level
    params = [0]  # lambdas whose ':' is still to come, per bracket level
    indent = 0
    elifs: dict[int, int] = {}
    line_start = True
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, s = tok.type, tok.string
            if kind in _SKIP:
                continue
            if kind == tokenize.INDENT:
                indent += 1
                continue
            if kind == tokenize.DEDENT:
                elifs.pop(indent, None)
                indent -= 1
                continue
            if kind == tokenize.NEWLINE:
                runs, lams, params, line_start = [0], [0], [0], True
                continue
            if line_start:
                line_start = False
                if s == "elif":
                    elifs[indent] = elifs.get(indent, 0) + 1
                elif s != "else":
                    elifs[indent] = 0
            if kind == tokenize.OP and s in _OPEN:
                runs[-1] += 1
                runs.append(0)
                lams.append(0)
                params.append(0)
            elif kind == tokenize.OP and s in _CLOSE:
                if len(runs) > 1:
                    runs.pop()
                    lams.pop()
                    params.pop()
            elif kind == tokenize.OP and s == ":" and params[-1]:
                params[-1] -= 1  # a lambda's colon: its body nests inside it, the chain goes on
                runs[-1] += 1
            elif kind == tokenize.OP and s in _SIBLING:
                runs[-1] = 0
                if s == "," and not params[-1]:
                    lams[-1] = 0  # a comma after a lambda's body ends it (a comma in its parameters does not)
            else:
                if kind == tokenize.NAME and s == "lambda":
                    lams[-1] += 1
                    params[-1] += 1
                runs[-1] += 1
            depth = (BRACKET * (len(runs) - 1) + runs[-1] + LAMBDA * lams[-1] + INDENT * indent
                     + ELIF * elifs.get(indent, 0))
            if depth > best:
                best, best_line = depth, tok.start[0]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return best, best_line


# every string and comment, as tokenize reads them (a single-quoted string ends at its line unless a backslash
# continues it; tokenize.py 3.11 ContStr, Single, Double, Single3, Double3 and Comment)
_ERASE = re.compile(
    r"""'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"""
    r'''|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'''
    r"""|'[^\n'\\]*(?:(?:\\\r\n|\\.)[^\n'\\]*)*'"""
    r'''|"[^\n"\\]*(?:(?:\\\r\n|\\.)[^\n"\\]*)*"'''
    r"|#[^\r\n]*", re.DOTALL)
# a character tokenize cannot start a token with: there it writes each blank before it as a token of its own
_ODD = re.compile(r"[^\w \t\f\r\n+\-*/%&|^~<>=.,:;@()\[\]{}\\!]|![^=]|!$|\r(?!\n)")
_OPENS = str.maketrans("", "", "([{")
_CLOSES = str.maketrans("", "", ")]}")
_BLANKS = str.maketrans("", "", " \t\f")


def bound(text: str) -> int | None:
    """An upper bound of :func:`nesting`'s estimate from a few string operations per line instead of a token
    loop (the loop costs a fifth of libcst's parse on the benchmark's tree); ``None`` where it gives none (a
    quote, a backslash or a character that starts no token left outside any string, where tokenize writes
    each blank before it as a token; or Python 3.12+, whose tokenize also splits f-strings).

    Each string and comment becomes one character (one token at most). A *group* of lines runs from a line
    where the bracket count is back to zero, across lines whose brackets stay open or that end with a
    backslash: every logical line lies inside one (tokenize's bracket level is never above the group's
    count). A token's bracket depth is at most the group's opening brackets, its chain at most the group's
    characters other than blanks (each token has one), its indentation at most the number of distinct
    leading whitespaces (each level is a greater column), its elif run at most the file's ``elif`` words.
    So the estimate is at most ``max over groups (5 x opens + characters) + 5 x indents + 2 x elifs``."""
    if sys.version_info >= (3, 12):
        return None
    code = _ERASE.sub("S", text)
    if "'" in code or '"' in code or code.count("\\") != code.count("\\\n") or _ODD.search(code):
        return None
    best = group = opens = depth = 0
    indents = set()
    for line in code.split("\n"):
        bare = line.lstrip(" \t\f")
        if len(bare) < len(line):
            indents.add(line[:len(line) - len(bare)])
        o = len(line) - len(line.translate(_OPENS))
        depth += o - (len(line) - len(line.translate(_CLOSES)))
        opens += o
        group += len(line.translate(_BLANKS))
        if depth <= 0 and not line.endswith("\\"):
            best = max(best, BRACKET * opens + group)
            group = opens = depth = 0
    best = max(best, BRACKET * opens + group)
    return best + INDENT * len(indents) + ELIF * code.count("elif")


def check_nesting(text: str, path: str) -> None:
    """Raise :class:`MigrateError` ``"PATH: nested too deeply to parse safely (estimate N at line L, limit
    1000)"`` when :func:`nesting` exceeds :data:`LIMIT` (not computed where :func:`bound` already proves it
    does not)."""
    cheap = bound(text)
    if cheap is not None and cheap <= LIMIT:
        return
    depth, line = nesting(text)
    if depth > LIMIT:
        raise MigrateError(f"{path}: nested too deeply to parse safely (estimate {depth} at line {line}, "
                           f"limit {LIMIT})")


class _Worker:
    """One thread with a :data:`STACK_BYTES` stack that runs the parses one after another, kept for the
    process: a new thread per file cost a quarter of libcst's parse on top of it (measured on the benchmark's
    synthetic tree, 1.96 s against 1.57 s for 303 files: the native parser starts cold in each new thread),
    where one reused thread costs nothing measurable. A forked child (the plan's process pool) starts its own."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="mpsready-parse", daemon=True)

    def _loop(self) -> None:
        while True:
            fn, box, done = self.jobs.get()
            try:
                box.append((True, fn()))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread as it is
                box.append((False, exc))
            done.set()

    def run(self, fn: Callable[[], T]) -> T:
        box: list = []
        done = threading.Event()
        self.jobs.put((fn, box, done))
        done.wait()
        ok, value = box[0]
        if not ok:
            raise value
        return value


_worker: _Worker | None = None
_starting = threading.Lock()


def _started() -> _Worker | None:
    """The process's parse thread, started on first use; ``None`` where no such thread can be started (the
    platform refuses the size, an address-space limit)."""
    global _worker
    with _starting:
        if _worker is not None and _worker.pid == os.getpid() and _worker.thread.is_alive():
            return _worker
        try:
            old = threading.stack_size(STACK_BYTES)  # applies to threads started from now on
        except (ValueError, RuntimeError):  # a platform that cannot set it: the caller's stack, as before
            return None
        try:
            worker = _Worker()
            worker.thread.start()
        except RuntimeError:  # no thread with that stack (an address-space limit): the caller's stack
            return None
        finally:
            threading.stack_size(old)
        _worker = worker
        return worker


def on_big_stack(fn: Callable[[], T]) -> T:
    """``fn()`` run on the process's parse thread, whose stack is :data:`STACK_BYTES`; its exception is raised
    here. Where no such thread can be started, ``fn()`` runs here: the nesting estimate then keeps the margin
    of an 8 MiB stack."""
    worker = _started()
    return fn() if worker is None else worker.run(fn)

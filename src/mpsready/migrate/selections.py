"""Where a project selects its device itself, and which of those places each file can be said to follow.

A rewritten ``.cuda()`` that cannot see the project's selection must not make an independent choice
(:mod:`mpsready.migrate.device_source`). The scan reports the selections that ignore MPS (API104); once migrate has
given one its MPS branch the scan no longer reports it, yet the project still selects its device there. So the
places are both:

- the API104 findings of the scan, and
- the selections that already consider MPS: an ``if``/conditional expression whose test asks
  ``torch.backends.mps.is_available()`` (the form migrate writes, and the one PyTorch documents for choosing
  MPS: https://pytorch.org/docs/stable/notes/mps.html) or ``torch.accelerator.current_accelerator()`` (PyTorch
  2.6 and later), outside the helper migrate adds (``def _mpsready_device``: every choice made through it agrees).

Without the second kind, a second run (or the next round of one run) found no selection and rewrote the calls the
first had refused with the helper: the device mixing the first run refused.

Each notebook is its own program (its kernel runs its own cells): a notebook follows only its own selections, and
a script only the scripts' (one notebook's ``device = ...`` never blocks the fix in another).
"""

from __future__ import annotations

import ast

from mpsready.findings import Finding

HELPER_NAME = "_mpsready_device"
_MPS_TESTS = ("mps.is_available", "accelerator.current_accelerator", "accelerator.is_available")
_WORDS = (b"mps.is_available", b"current_accelerator", b"accelerator.is_available")


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _asks_mps(test: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and _dotted(n.func).endswith(_MPS_TESTS) for n in ast.walk(test))


def mps_selection_lines(tree: ast.AST) -> list[int]:
    """The lines of ``if``/conditional expressions whose test asks for MPS (see the module docstring), outside the
    migrate helper's body."""
    out: list[int] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == HELPER_NAME:
            continue
        if isinstance(node, (ast.If, ast.IfExp)) and _asks_mps(node.test):
            out.append(node.lineno)
        stack.extend(ast.iter_child_nodes(node))
    return sorted(set(out))


def _mask_magics(source: str) -> str:
    """IPython magics and shell escapes (``%matplotlib``, ``!pip``) as ``pass`` lines, so the cell parses."""
    lines = []
    for line in source.split("\n"):
        s = line.lstrip()
        lines.append(line[: len(line) - len(s)] + "pass" if s.startswith(("%", "!", "?")) else line)
    return "\n".join(lines)


def mps_selections(rel: str, data: bytes) -> list[str]:
    """The places (``train.py:4``, ``nb.ipynb:cell 3:line 2``) where the file ``rel`` with bytes ``data`` selects a
    device with MPS among the choices; ``[]`` for a file that does not parse (the scan lists it)."""
    if not any(w in data for w in _WORDS):
        return []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return []
    if rel.endswith(".ipynb"):
        from mpsready.scan.sources.notebook import NotebookError, code_cells

        try:
            cells = code_cells(text, skipped=[])
        except NotebookError:
            return []
        out = []
        for cell in cells:
            try:
                tree = ast.parse(_mask_magics(cell.source))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            out += [f"{rel}:cell {cell.index}:line {line}" for line in mps_selection_lines(tree)]
        return out
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [f"{rel}:{line}" for line in mps_selection_lines(tree)]


def finding_place(f: Finding) -> str:
    """Where an API104 finding is, as the manual reasons name it (a notebook's by cell and line)."""
    ev = f.evidence or {}
    if (f.location.path or "").endswith(".ipynb") and ev.get("cell"):
        return f"{f.location.path}:cell {ev['cell']}:line {ev.get('cell_line')}"
    return f"{f.location.path}:{f.location.line}"


def _path_of(place: str) -> str:
    return place.split(":cell ", 1)[0] if ".ipynb:cell " in place else place.rsplit(":", 1)[0]


def for_file(rel: str, places: tuple[str, ...]) -> tuple[str, ...]:
    """The selections ``rel`` follows: a notebook its own, a script every script's."""
    if rel.endswith(".ipynb"):
        return tuple(p for p in places if _path_of(p) == rel)
    return tuple(p for p in places if not _path_of(p).endswith(".ipynb"))

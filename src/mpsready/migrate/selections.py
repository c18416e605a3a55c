"""Where a project selects its device itself, and which of those places each file can be said to follow.

A rewritten ``.cuda()`` that cannot see the project's selection must not make an independent choice
(:mod:`mpsready.migrate.device_source`). The scan reports the selections that ignore MPS (API104); once migrate has
given one its MPS branch the scan no longer reports it, yet the project still selects its device there. So the
places are both:

- the API104 findings of the scan, and
- the selections that already consider MPS: an ``if``/conditional expression whose test asks
  ``torch.backends.mps.is_available()`` (the form migrate writes, and the one PyTorch documents for choosing
  MPS: https://pytorch.org/docs/stable/notes/mps.html) or ``torch.accelerator.current_accelerator()`` (PyTorch
  2.6 and later), outside the helper migrate adds (``def _mpsready_device``: every choice made through it agrees),
  and whose guarded branch yields a device: a device string (``"mps"``, ``"cuda:0"``, ``"cpu"``), a
  ``torch.device(...)`` or the accelerator itself. A test of MPS that only guards a call (migrate's own
  ``elif torch.backends.mps.is_available(): torch.mps.synchronize()``, a memory query ``... if
  torch.backends.mps.is_available() else 0``) selects nothing: counting it made every ``.cuda()`` of a file
  whose ``synchronize()`` the first round guarded manual in the second (mar: 5 of 26 moves).

Without the second kind, a second run (or the next round of one run) found no selection and rewrote the calls the
first had refused with the helper: the device mixing the first run refused.

A selection that chooses exactly as the helper does is no obstacle: the conditional expression ``"cuda" if
torch.cuda.is_available() else "cpu"`` (also inside or as ``torch.device(...)``), with nothing but the availability
test, is migrated to ``"cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else
"cpu"``, which is the helper's choice on every machine (no flag can force it elsewhere, and ``"cuda"`` without an
index is the current CUDA device on both sides). Code that cannot see such a selection may take the helper: the two
agree. Only selections that can choose otherwise (a ``--no-cuda`` flag, an index, an if/elif chain a person must
migrate) block an independent choice (:func:`plain_at`).

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


_DEVICE_WORDS = ("cuda", "mps", "cpu")


def _yields_device(nodes: list[ast.AST]) -> bool:
    """Whether the code ``nodes`` holds a device: a device string, a ``torch.device(...)`` or the accelerator."""
    for top in nodes:
        for n in ast.walk(top):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) \
                    and n.value.split(":", 1)[0] in _DEVICE_WORDS:
                return True
            if isinstance(n, ast.Call) and _dotted(n.func).endswith(("torch.device", "current_accelerator")):
                return True
    return False


def _device_of(node: ast.AST) -> str | None:
    """``"cuda"`` for ``"cuda"`` or ``torch.device("cuda")`` (the same for ``mps``/``cpu``), else ``None``."""
    if isinstance(node, ast.Call) and _dotted(node.func).endswith("device") and len(node.args) == 1 \
            and not node.keywords:
        node = node.args[0]
    if isinstance(node, ast.Constant) and node.value in _DEVICE_WORDS:
        return str(node.value)
    return None


def _asks_only(test: ast.AST, what: str) -> bool:
    return isinstance(test, ast.Call) and not test.args and not test.keywords and _dotted(test.func).endswith(what)


def plain(node: ast.AST) -> bool:
    """Whether ``node`` is a conditional expression choosing as the helper does: ``"cuda" if
    torch.cuda.is_available() else "cpu"`` (or ``torch.device`` of each, or the whole in ``torch.device(...)``),
    with ``"mps" if torch.backends.mps.is_available() else "cpu"`` in place of ``"cpu"`` once migrated."""
    if isinstance(node, ast.Call) and _dotted(node.func).endswith("device") and len(node.args) == 1 \
            and not node.keywords:
        node = node.args[0]
    if not isinstance(node, ast.IfExp) or not _asks_only(node.test, "cuda.is_available") \
            or _device_of(node.body) != "cuda":
        return False
    rest = node.orelse
    if isinstance(rest, ast.IfExp):
        if not _asks_only(rest.test, "mps.is_available") or _device_of(rest.body) != "mps":
            return False
        rest = rest.orelse
    return _device_of(rest) == "cpu"


def _branch_devices(body: list[ast.stmt]) -> set[str | None]:
    """The devices the statements ``body`` assign (``device = "cuda"``, ``args.device = torch.device("cpu")``)."""
    return {_device_of(st.value) for st in body if isinstance(st, ast.Assign) and _device_of(st.value) is not None}


def plain_if(node: ast.AST) -> bool:
    """The statement form of :func:`plain`: ``if torch.cuda.is_available():`` assigning ``"cuda"`` (other
    statements aside), ``else:`` assigning ``"cpu"``, with an ``elif torch.backends.mps.is_available():`` assigning
    ``"mps"`` between once migrated."""
    if not isinstance(node, ast.If) or not _asks_only(node.test, "cuda.is_available") \
            or _branch_devices(node.body) != {"cuda"}:
        return False
    rest = node.orelse
    if len(rest) == 1 and isinstance(rest[0], ast.If):
        mps = rest[0]
        if not _asks_only(mps.test, "mps.is_available") or _branch_devices(mps.body) != {"mps"}:
            return False
        rest = mps.orelse
    return _branch_devices(rest) == {"cpu"}


def plain_at(tree: ast.AST, line: int) -> bool:
    """Whether every selection starting at ``line`` of ``tree`` (an assignment's value there, a conditional
    expression there) is :func:`plain`; ``False`` when none is found (a form this cannot read blocks)."""
    statements = [n for n in ast.walk(tree) if isinstance(n, ast.If) and n.lineno == line]
    if statements:
        return all(plain_if(n) and alone(tree, n) for n in statements)
    found = [n for n in ast.walk(tree) if isinstance(n, (ast.IfExp, ast.Call)) and n.lineno == line
             and (isinstance(n, ast.IfExp) or _dotted(n.func).endswith("device"))]
    tops = [n for n in found if not any(n is not m and any(n is d for d in ast.walk(m)) for m in found)]
    holders = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.lineno == line]
    return bool(tops) and all(plain(n) for n in tops) and all(alone(tree, h) for h in holders)


def _targets(stmt: ast.AST) -> set[str]:
    """The dotted names ``stmt`` (and the statements in it) assign: ``device``, ``args.device``, ``self.device``."""
    out = set()
    for n in ast.walk(stmt):
        if isinstance(n, ast.Assign):
            out |= {_dotted(t) for t in n.targets}
        elif isinstance(n, (ast.AnnAssign, ast.AugAssign)):
            out.add(_dotted(n.target))
    return out - {""}


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _scope_of(tree: ast.AST, target: ast.AST) -> ast.AST:
    """The innermost function (or class, or the module) whose own body holds ``target``."""
    stack: list[tuple[ast.AST, ast.AST]] = [(tree, tree)]
    while stack:
        node, scope = stack.pop()
        if node is target:
            return scope
        inner = node if isinstance(node, _SCOPES) else scope
        stack.extend((c, inner) for c in ast.iter_child_nodes(node))
    return tree


def _own_statements(scope: ast.AST) -> list[ast.AST]:
    """The statements of ``scope``'s own body, nested functions and classes left out (their names are theirs)."""
    out, stack = [], list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


def alone(tree: ast.AST, stmt: ast.AST) -> bool:
    """Whether no statement outside the selection ``stmt`` assigns the name it binds (a plain name in the same
    function or at module level; an attribute, ``args.device``, anywhere in the file): ``if args.cpu: device =
    "cpu"`` after a plain selection can force the CPU, so the selection is no longer the helper's choice."""
    names = _targets(stmt)
    inside = {id(n) for n in ast.walk(stmt)}
    plain_names, dotted = {n for n in names if "." not in n}, {n for n in names if "." in n}
    near = _own_statements(_scope_of(tree, stmt)) if plain_names else []
    for nodes, wanted in ((near, plain_names), (list(ast.walk(tree)) if dotted else [], dotted)):
        for n in nodes:
            if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and id(n) not in inside \
                    and _targets(n) & wanted:
                return False
    return True


def mps_selection_lines(tree: ast.AST) -> list[int]:
    """The lines of ``if``/conditional expressions whose test asks for MPS and whose guarded branch yields a device
    (see the module docstring), outside the migrate helper's body."""
    out: list[int] = []
    stack: list[ast.AST] = [tree]
    chained: set[int] = set()  # id() of the `elif` of a plain if/else selection: chooses as the helper does
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == HELPER_NAME:
            continue
        if isinstance(node, ast.If) and plain_if(node) and len(node.orelse) == 1 and alone(tree, node):
            chained.add(id(node.orelse[0]))
        if id(node) in chained:
            stack.extend(ast.iter_child_nodes(node))
            continue
        if isinstance(node, ast.IfExp) and _asks_mps(node.test) and _yields_device([node.body]):
            if not plain_at(tree, node.lineno):
                out.append(node.lineno)
        elif isinstance(node, ast.If) and _asks_mps(node.test) and _yields_device(list(node.body)):
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


def _without_helper(data: bytes) -> bytes:
    """``data`` with the helper migrate adds (either form, as :mod:`mpsready.migrate.helper` writes it) taken out."""
    from mpsready.migrate.helper import helper_source  # the migrate package has libcst loaded already

    for accelerator in (False, True):
        data = data.replace(helper_source(accelerator).encode(), b"")
    return data


def mps_selections(rel: str, data: bytes) -> list[str]:
    """The places (``train.py:4``, ``nb.ipynb:cell 3:line 2``) where the file ``rel`` with bytes ``data`` selects a
    device with MPS among the choices; ``[]`` for a file that does not parse (the scan lists it)."""
    if not any(w in data for w in _WORDS):
        return []
    if HELPER_NAME.encode() in data and not any(w in _without_helper(data) for w in _WORDS):
        return []  # only the helper asks for MPS here (most files a first round edited): nothing to parse
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


def _trees(rel: str, data: bytes) -> dict[int | None, ast.AST]:
    """The parsed file (key ``None``), or a notebook's parsed code cells by index; ``{}`` when it does not parse."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return {}
    if not rel.endswith(".ipynb"):
        try:
            return {None: ast.parse(text)}
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return {}
    from mpsready.scan.sources.notebook import NotebookError, code_cells

    try:
        cells = code_cells(text, skipped=[])
    except NotebookError:
        return {}
    out: dict[int | None, ast.AST] = {}
    for cell in cells:
        try:
            out[cell.index] = ast.parse(_mask_magics(cell.source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return out


def blocking(findings: list[Finding], data: bytes) -> list[Finding]:
    """The API104 ``findings`` of one file (bytes ``data``) whose selection is not :func:`plain`: those block an
    independent choice elsewhere; a plain one is migrated to the helper's own choice."""
    if not findings:
        return []
    trees = _trees(findings[0].location.path or "", data)
    out = []
    for f in findings:
        ev = f.evidence or {}
        cell = ev.get("cell") if (f.location.path or "").endswith(".ipynb") else None
        line = ev.get("cell_line") if cell is not None else f.location.line
        tree = trees.get(cell)
        if tree is None or not isinstance(line, int) or not plain_at(tree, line):
            out.append(f)
    return out


def finding_place(f: Finding) -> str:
    """Where an API104 finding is, as the manual reasons name it (a notebook's by cell and line)."""
    ev = f.evidence or {}
    if (f.location.path or "").endswith(".ipynb") and ev.get("cell"):
        return f"{f.location.path}:cell {ev['cell']}:line {ev.get('cell_line')}"
    return f"{f.location.path}:{f.location.line}"


def path_of(place: str) -> str:
    """The file of a selection place (``train.py:35``, ``nb.ipynb:cell 3:line 2``)."""
    return place.split(":cell ", 1)[0] if ".ipynb:cell " in place else place.rsplit(":", 1)[0]


def for_file(rel: str, places: tuple[str, ...], follow: dict[str, frozenset[str]] | None = None) -> tuple[str, ...]:
    """The selections ``rel`` follows: a notebook its own; a script every script's, or none when no program it runs
    in holds one (``follow``: :func:`mpsready.migrate.programs.followed`). A script that follows any keeps the whole
    list, in the order first seen, as before: the plan of a file reads the first places it names, and a list cut to
    one program's places grew from round to round (the migrated selection is seen again at its new line), so round
    2 planned every such file again instead of carrying round 1's records (the synthetic tree: 2.7 s -> 3.8 s)."""
    if rel.endswith(".ipynb"):
        return tuple(p for p in places if path_of(p) == rel)
    scripts = tuple(p for p in places if not path_of(p).endswith(".ipynb"))
    if follow is None or rel not in follow or follow[rel]:
        return scripts
    return ()

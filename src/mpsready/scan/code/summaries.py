"""The per-file summaries that need no visitor: whether a module runs as a program, its ``__main__`` guards,
the scripts it launches, the functions it defines, its pure-PyTorch reference paths, the imports guarded by
their callers, and the trigger lines the prefilter keeps (:func:`live_lines`)."""

from __future__ import annotations

import ast
import dataclasses
from bisect import bisect_right

from mpsready.scan.code.astutil import (TRY_NODES, is_cuda_literal, is_fallback_handler, mentions, spans_a_line,
                                        statements, walk_lines)
from mpsready.scan.code.result import CodeResult, DefSpan, ImportRecord, LineSpan, PureDef
from mpsready.scan.code.triggers import (contains_any, find_next_to, line_trigger_words, name_lines, substring_lines,
                                        trigger_lines)
from mpsready.scan.model import surfaces

_PURE_SUFFIXES = ("_pytorch", "_naive", "_native", "_ref", "_reference", "_torch")
_PURE_CALLS = tuple(s + "(" for s in _PURE_SUFFIXES)
# the calls grouped by a rare part they share: three passes over a text instead of six
_PURE_CALL_STEMS = (("ive(", ("_naive(", "_native(")), ("torch(", ("_pytorch(", "_torch(")),
                    ("_ref", ("_ref(", "_reference(")))
_PY_QUOTED = ('.py"', ".py'")  # a Python file's path as the end of a string literal
_MPS_QUOTED = ('"mps', "'mps")  # the start of a literal 'mps' / 'mps:0'


def is_entry(tree: ast.Module) -> bool:
    """A module that runs as a program: a ``__main__`` guard, or a module-level call statement outside
    definitions (a script such as nanoGPT's train.py); a bare docstring or a setup() call is not enough."""
    defines = any(isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for st in tree.body)
    for st in tree.body:
        if isinstance(st, ast.If) and isinstance(st.test, ast.Compare) and isinstance(st.test.left, ast.Name) \
                and st.test.left.id == "__name__":
            return True
        if isinstance(st, (ast.For, ast.While, ast.With)):
            return True
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and not defines:
            return True  # `net = Net()` in a module that defines nothing: a script
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            func = st.value.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name not in ("setup", "register", "filterwarnings", "simplefilter", "append", "insert", "extend",
                            "setLevel", "basicConfig", "use", "manual_seed", "seed", "set_start_method"):
                return True
    return False


def main_guards(tree: ast.Module) -> list[LineSpan]:
    """The first and last line of the body of each module-level ``if __name__ == "__main__":`` (either operand order)."""
    out = []
    for st in tree.body:
        if isinstance(st, ast.If) and isinstance(st.test, ast.Compare) and len(st.test.ops) == 1 \
                and isinstance(st.test.ops[0], ast.Eq) and st.body:
            sides = [st.test.left, st.test.comparators[0]]
            names = [s.id for s in sides if isinstance(s, ast.Name)]
            consts = [s.value for s in sides if isinstance(s, ast.Constant)]
            if names == ["__name__"] and consts == ["__main__"]:
                out.append(LineSpan(st.lineno, st.body[-1].end_lineno or st.body[-1].lineno))
    return out


def launched_paths(tree: ast.Module, text: str | None = None) -> list[str]:
    """String literals given to a call, directly or in a list or tuple argument, that look like a path to a
    Python file: ``subprocess.run(["python", "scripts/ppo.py"])``, ``Tuner(script="cleanrl/ppo.py")``.
    Whether the file exists is the project model's question (:mod:`mpsready.scan.model.graph`). With the module's
    ``text``, only the statements spanning a line that holds ``.py"`` or ``.py'`` are entered: such a literal has
    no blank, so it ends on its own line with the suffix before its closing quote (the same order as the whole walk,
    which the result keeps)."""
    found: dict[str, None] = {}
    for node in walk_lines(tree, None if text is None else substring_lines(text, _PY_QUOTED)):
        if not isinstance(node, ast.Call):
            continue
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            for item in (arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]):
                if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value.endswith(".py") \
                        and not any(c.isspace() for c in item.value):
                    found[item.value] = None
    return list(found)


def model_summaries(tree: ast.Module, text: str, result: CodeResult) -> None:
    """The per-file parts of the project model that do not need the visitor: configuration surfaces,
    pure-PyTorch reference functions and their uses, and whether anything is placed on a device (plain
    substring tests decide only whether a walk is worth it)."""
    result.surfaces = surfaces.collect(tree, text)
    result.entry = is_entry(tree)
    result.def_spans = [DefSpan(item.name, item.lineno, item.end_lineno or item.lineno)
                        for node in tree.body for item in (node.body if isinstance(node, ast.ClassDef) else [node])
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
    result.main_guards = main_guards(tree)
    if find_next_to(text, ".py", after="'\""):  # ".py'" or '.py"' in one pass
        result.launches = launched_paths(tree, text)
    result.places = any(w in text for w in (".to(", ".cuda(", "device=", "torch.device", "set_default_device"))
    if find_next_to(text, "mps", before="'\""):  # a compared 'mps' is a quoted literal: the walk is worth it only then
        # and only the statements spanning a line that holds such a quote can compare one
        result.mps_on_request = any(
            n.__class__ is ast.Compare and any(c.__class__ is ast.Constant and c.value in ("mps", "mps:0")
                                               for c in (n.left, *n.comparators))
            for n in walk_lines(tree, substring_lines(text, _MPS_QUOTED)))
        if result.surfaces:
            result.mps_switches = mps_switches(tree)
    defs = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.endswith(_PURE_SUFFIXES) \
                and not node.name.startswith("test"):
            defs[node.name] = node.lineno
    result.pure_defs = [PureDef(name, line) for name, line in defs.items()]
    # uses are searched only in sources that call such a name (`attn_core_pytorch(`): the walk over the whole
    # tree is the expensive part, and most sources have no such call
    if not any(contains_any(text, calls, stem) for stem, calls in _PURE_CALL_STEMS):  # any of _PURE_CALLS
        return
    refs = set()
    # a name ending in a suffix holds it in the text: only the statements on such lines are entered
    for ref in walk_lines(tree, substring_lines(text, _PURE_SUFFIXES)):
        # a use is a Name or an attribute; an import of the name alone wires nothing
        name = ref.id if isinstance(ref, ast.Name) else ref.attr if isinstance(ref, ast.Attribute) else None
        if name and name.endswith(_PURE_SUFFIXES):
            refs.add(name)
    result.pure_refs = sorted(refs)


def mps_switches(tree: ast.Module) -> list[str]:
    """Names whose truth selects MPS: ``if apple_silicon:`` (or ``if args.mps:``) whose body binds a name to
    ``torch.device("mps")`` or ``"mps"`` (possibly under a further availability test). Read with the file's
    store_true options: such an option is the flag that puts the program on MPS (issue 32, the good news)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if node.__class__ is not ast.If:
            continue
        test = node.test  # type: ignore[attr-defined]
        name = test.attr if test.__class__ is ast.Attribute else test.id if test.__class__ is ast.Name else None
        if name is None or name in out:
            continue
        for inner in (n for stmt in node.body for n in ast.walk(stmt)):  # type: ignore[attr-defined]
            if inner.__class__ is ast.Assign:
                value = inner.value  # type: ignore[attr-defined]
                if value.__class__ is ast.Call and value.args:  # torch.device("mps")
                    value = value.args[0]
                if value.__class__ is ast.Constant and value.value in ("mps", "mps:0"):
                    out.add(name)
                    break
    return sorted(out)


def guard_by_callers(tree: ast.Module, text: str, imports: list[ImportRecord]) -> list[ImportRecord]:
    """``imports`` with each unguarded import inside a module-level function marked as guarded when every use of
    that function in this module is a call inside a try/except with a fallback (whisper's ``dtw_cuda()`` imports
    its Triton kernel and is called only under ``try: ... except (RuntimeError, ...)``). The guard becomes the
    function's name (truthy), so the engine can still refuse it when another file imports the function.
    ``text`` is the module's source: only statements spanning a line that names a candidate are walked."""
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    # the definitions a name still holds (a redefinition replaces the first), in line order: module-level
    # definitions do not overlap, so the one that may hold a line is the last to start at or before it
    defs = sorted(functions.values(), key=lambda f: f.lineno)
    starts = [f.lineno for f in defs]
    pending: list[tuple[int, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for i, entry in enumerate(imports):
        if entry.guard or not defs:
            continue
        line = entry.line
        at = bisect_right(starts, line) - 1
        if at >= 0 and line <= (defs[at].end_lineno or defs[at].lineno):
            pending.append((i, defs[at]))
    if not pending:
        return imports
    candidates: dict[str, ast.AST] = {fn.name: fn for _, fn in pending}
    lines = name_lines(text, tuple(candidates))
    verdicts = only_called_under_fallback(tree, candidates, lines)
    out = list(imports)
    for i, fn in pending:
        if verdicts[fn.name]:
            out[i] = dataclasses.replace(out[i], guard=fn.name)
    return out


_ALL_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def only_called_under_fallback(tree: ast.Module, candidates: dict[str, ast.AST],
                               lines: list[int] | None = None) -> dict[str, bool]:
    """For each module-level function in ``candidates`` (name -> definition): whether it is referenced at least
    once in the module, and only as the callee of calls in the body of a try whose handler falls back (not
    inside the function itself, not passed around, not rebound). One walk over the module answers for every
    candidate: a node lies inside at most one module-level definition, whose own name it cannot decide."""
    calls = dict.fromkeys(candidates, 0)
    bad: set[str] = set()
    own = {id(fn): name for name, fn in candidates.items()}
    stack: list[tuple[ast.AST, bool, str | None]] = [(tree, False, None)]
    while stack:
        node, guarded, owner = stack.pop()
        cls = node.__class__
        if lines is not None and isinstance(node, ast.stmt) and not spans_a_line(node, lines):
            continue  # every reference to a candidate is a name on a line that holds it
        # type(node) rather than a local copy of the class: mypy narrows node on it, and CPython 3.11 makes the
        # call as cheap as the copy (isinstance and .__class__ cost about twice as much on these hot paths)
        if type(node) is ast.FunctionDef or type(node) is ast.AsyncFunctionDef or type(node) is ast.ClassDef:
            name = own.get(id(node))
            if name is not None:
                owner = name  # the candidate itself: its body does not decide its own verdict
            elif node.name in calls and node.name != owner:
                bad.add(node.name)  # redefined: the calls may mean another function
        elif type(node) is ast.Call and node.func.__class__ is ast.Name:
            name = node.func.id
            if name in calls and name != owner:
                if guarded:
                    calls[name] += 1
                else:
                    bad.add(name)
            stack += [(child, guarded, owner) for child in (*node.args, *node.keywords)]
            continue
        elif type(node) is ast.Name:
            if node.id in calls and node.id != owner:
                bad.add(node.id)  # passed around, rebound or exported by value
            continue
        elif cls in TRY_NODES and isinstance(node, TRY_NODES):  # the isinstance (on a match only) narrows
            body_guarded = guarded or any(is_fallback_handler(h) for h in node.handlers)
            stack += [(st, body_guarded, owner) for st in node.body]
            stack += [(part, guarded, owner) for part in (*node.handlers, *node.orelse, *node.finalbody)]
            continue
        fields = _ALL_CHILD_FIELDS.get(cls)
        if fields is None:
            fields = _ALL_CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f != "ctx")
        for field_name in fields:
            value = getattr(node, field_name, None)
            if value.__class__ is list:
                stack += [(v, guarded, owner) for v in value if isinstance(v, ast.AST)]
            elif isinstance(value, ast.AST):
                stack.append((value, guarded, owner))
    return {name: name not in bad and calls[name] > 0 for name in candidates}


def live_lines(tree: ast.Module, text: str) -> list[int]:
    """Lines on which a finding can start: those holding a trigger word, a name bound by an import to a
    trigger-bearing module path (`import torch.cuda as tc`, `from numpy import zeros`), or a variable the
    analyser follows from its assignment to its use: one assigned a CUDA device literal (`dev = "cuda"`,
    later `.to(dev)`), a NumPy call / `.astype` (`a = np.zeros(3)`, later `torch.from_numpy(a).to(d)`), a
    call with a float64 `dtype=` (`b = torch.linspace(..., dtype=torch.float64)`, later `register_buffer("b", b)`),
    or arithmetic, slicing or a call over a variable followed so far (`alphas = 1.0 - betas`). Assignments are
    taken in source order, which is the order the analyser binds them in, so one round is enough."""
    words = set(line_trigger_words())
    imports: list[ast.Import | ast.ImportFrom] = []
    assigns: list[ast.Assign] = []
    statements(tree.body, imports, assigns)
    extra: set[str] = set()
    numpy_names = {"numpy"}  # an unimported `numpy.zeros` resolves as written
    for imp in imports:
        if isinstance(imp, ast.Import):
            pairs = [(a.asname, a.name) for a in imp.names if a.asname]
        elif imp.module and not imp.level:
            pairs = [(a.asname or a.name, f"{imp.module}.{a.name}") for a in imp.names if a.name != "*"]
        else:
            continue
        for local, qualified in pairs:
            if local not in words and any(part in words for part in qualified.split(".")):
                extra.add(local)
            if qualified == "numpy" or qualified.startswith("numpy."):
                numpy_names.add(local)
    lines = set(trigger_lines(text))
    if extra:
        lines.update(trigger_lines(text, tuple(extra)))
    bound: set[str] = set()
    for assign in assigns:  # in source order, so a name bound from a followed one is followed too
        value = assign.value
        if value.__class__ is ast.Constant:
            follow = is_cuda_literal(value.value)
        elif value.__class__ is ast.Call:
            func = value.func
            root = func
            while root.__class__ is ast.Attribute:
                root = root.value
            follow = (func.__class__ is ast.Attribute and func.attr == "astype") or (
                root.__class__ is ast.Name and root.id in numpy_names) or any(
                k.arg == "dtype" and k.value.__class__ is ast.Attribute and k.value.attr in ("float64", "double")
                for k in value.keywords) or (bool(bound) and mentions(value, bound))
        else:  # arithmetic or slicing over a followed name: `alphas = 1.0 - betas`
            follow = bool(bound) and value.__class__ in (ast.BinOp, ast.UnaryOp, ast.Subscript) and mentions(value, bound)
        if follow:
            for target in assign.targets:
                name = target.id if target.__class__ is ast.Name else \
                    target.attr if target.__class__ is ast.Attribute else None
                if name is not None and name not in words and name not in extra:
                    bound.add(name)
    if bound:
        lines.update(trigger_lines(text, tuple(bound)))
    return sorted(lines)

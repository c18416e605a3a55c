"""One Python source in, raw findings out: everything the scan learns from a syntax tree.

The result is plain JSON-able data (:class:`CodeResult`) so it can cross a process pool and live in
the content-hash cache; paths and scopes are added later by the engine. Findings come only from
the ``ast`` tree (and ``tokenize`` for ``# mpsready: ignore[...]`` comments), never from regular
expressions over the source.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
import warnings
from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Severity
from mpsready.scan import knowledge
from mpsready.scan.code.names import AliasMap, build_alias_map
from mpsready.scan.code.triggers import bisect_left, line_trigger_words, may_fire, trigger_lines
from mpsready.scan.model import surfaces
from mpsready.scan.rules import inputs as I

# Bump when the analysis changes so cached results are recomputed.
ANALYZER_VERSION = 29

# Skip the analysis of sources without a trigger word (see triggers.py); tests turn it off to compare.
PREFILTER = True

_FALLBACK_EXCEPTIONS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError", "RuntimeError"}
_CAST_METHODS = {"float", "half", "bfloat16", "type", "int", "long", "bool"}
_NUMPY_F64_FACTORIES = {
    "numpy.random.rand", "numpy.random.randn", "numpy.random.random", "numpy.random.uniform", "numpy.random.normal",
    "numpy.random.random_sample", "numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "numpy.linspace",
    "numpy.eye", "numpy.identity", "numpy.loadtxt", "numpy.genfromtxt",
}
_TENSOR_FROM_ARRAY = {"torch.from_numpy", "torch.tensor", "torch.as_tensor", "torch.Tensor"}
# NumPy functions whose result keeps a float64 argument's dtype (NumPy's type promotion: a float64 array
# combined with Python numbers or float64 stays float64; NumPy 1.26/2.x "Type promotion" docs)
_NUMPY_F64_KEEPERS = {f"numpy.{f}" for f in (
    "cumprod", "cumsum", "sqrt", "log", "log1p", "log2", "log10", "exp", "expm1", "clip", "append", "concatenate",
    "stack", "hstack", "vstack", "flip", "copy", "abs", "absolute", "maximum", "minimum", "power", "square", "sin",
    "cos", "tan", "tanh", "arctan", "reshape", "diff", "array", "asarray", "ascontiguousarray", "interp", "outer",
    "multiply", "divide", "add", "subtract", "pad", "repeat", "tile", "sort", "broadcast_to", "squeeze", "transpose")}
# array methods that keep the dtype (``a.reshape(...)``, ``a.copy()``); ``astype`` is judged by its argument
_NUMPY_F64_METHODS = {"copy", "reshape", "clip", "cumprod", "cumsum", "flatten", "ravel", "squeeze", "transpose",
                      "repeat", "flip", "round"}
_F64_DEPTH = 24  # nested expressions followed when asking whether a value is float64 (deeper: not known)
# torch factories that make a tensor on the default device (the CPU unless torch.set_default_device says otherwise;
# torch docs "torch.set_default_device", 2.13): with dtype=torch.float64 and no device= the tensor is a CPU tensor,
# legal on a Mac, and fails only when it is moved to MPS before a cast
_TORCH_FACTORIES = {f"torch.{f}" for f in (
    "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "tensor", "as_tensor", "rand", "randn",
    "randint", "eye", "normal")}
_F64_TORCH_NAMES = {"torch.float64", "torch.double"}
# torch functions whose result keeps a float64 argument's dtype, for names followed from a CPU float64 factory
# (PyTorch docs, "Tensor Attributes: Type Promotion", 2.13: float64 with Python scalars stays float64)
_TORCH_F64_KEEPERS = {f"torch.{f}" for f in ("cumprod", "cumsum", "sqrt", "log", "exp", "clip", "clamp", "cat", "stack",
                                              "flip", "abs", "sigmoid", "cos", "sin")}
_DEVICE_KWARGS = {"device", "map_location", "devices", "device_map"}
_KERNEL_LIBS = {"triton", "cupy", "numba", "pycuda"}


def is_cuda_literal(value: Any) -> bool:
    """``"cuda"`` or ``"cuda:N"`` (a device string naming CUDA)."""
    if not isinstance(value, str):
        return False
    return value == "cuda" or (value.startswith("cuda:") and value[5:].isdigit())


@dataclass
class CodeResult:
    """What one Python source yields. ``findings`` are dicts: code, severity, line, column, message, fix,
    source, evidence and optionally ``scope`` (a forced scope such as ``distributed``). ``imports`` are
    ``[level, module, [names], line, guarded]`` with relative imports unresolved. ``suppress`` maps a line
    number (as a string, for JSON) to the codes ignored there (``["*"]`` for all)."""

    findings: list[dict[str, Any]] = field(default_factory=list)
    imports: list[list[Any]] = field(default_factory=list)
    suppress: dict[str, list[str]] = field(default_factory=dict)
    extensions: list[str] = field(default_factory=list)  # module names of CUDA extensions built here
    parsed: bool = True
    # CUDA source files named here: [file name, line, line of a try/except fallback around the build or None]
    cu_refs: list[list[Any]] = field(default_factory=list)
    # the project model's per-file summaries, joined across files by the engine (mpsready.scan.model):
    surfaces: list[dict[str, Any]] = field(default_factory=list)  # configuration surfaces (model.surfaces)
    f64_returns: list[str] = field(default_factory=list)  # functions returning a NumPy float64 array
    # [callee, line, column, factory]: a tensor made from the result of a project call, moved to a device uncast
    f64_sinks: list[list[Any]] = field(default_factory=list)
    # [function, parameter index, line, column, factory]: a parameter made into a tensor and moved uncast
    param_sinks: list[list[Any]] = field(default_factory=list)
    # [callee, argument index, line]: a call passing a NumPy float64 array
    f64_calls: list[list[Any]] = field(default_factory=list)
    pure_defs: list[list[Any]] = field(default_factory=list)  # [name, line] of pure-PyTorch reference functions
    pure_refs: list[str] = field(default_factory=list)  # those names used here other than by their definition
    # lines of `if` tests that send only CUDA tensors to a custom autograd Function (`x.device.type != "cuda"`):
    # a pure-PyTorch path wired correctly (what `mpsready migrate` makes of an EXT108 fallback keyed on the CPU)
    device_dispatch: list[int] = field(default_factory=list)
    places: bool = False  # the source moves or creates something on a device (.to(, .cuda(, device=)
    # the source compares a value with 'mps' (`device == "mps"`, `"mps" in device`): it uses MPS when asked
    mps_on_request: bool = False
    def_spans: list[list[Any]] = field(default_factory=list)  # [name, first line, last line] of functions/methods
    entry: bool = False  # runs as a program: `if __name__ == "__main__":` or module-level calls (a script)
    # [first line, last line] of each module-level `if __name__ == "__main__":` body (its `else` runs on import)
    main_guards: list[list[int]] = field(default_factory=list)
    # string literals passed to a call that name a Python file ("scripts/ppo.py"): scripts a launcher starts
    launches: list[str] = field(default_factory=list)
    # attribute names assigned a value that asks torch.cuda (`args.cuda = not args.no_cuda and
    # torch.cuda.is_available()`): a test on them is a CUDA-availability check whatever the option's default
    availability_attrs: list[str] = field(default_factory=list)

    _FIELDS = ("findings", "imports", "suppress", "extensions", "parsed", "cu_refs", "surfaces", "f64_returns",
               "f64_sinks", "param_sinks", "f64_calls", "pure_defs", "pure_refs", "places", "entry", "device_dispatch",
               "mps_on_request", "def_spans", "main_guards", "launches", "availability_attrs")

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._FIELDS}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CodeResult":
        out = cls(d["findings"], d["imports"], d["suppress"], d["extensions"], d["parsed"], d.get("cu_refs", []))
        for name in cls._FIELDS[6:]:
            if name in d:
                setattr(out, name, d[name])
        return out


def analyze_source(source: str | bytes, *, prefilter: bool | None = None) -> CodeResult:
    """Analyse one Python source: :func:`_analyze_source`, total. A tree Python parses but nests deeper than the
    analysis can walk (a 1,000-branch ``elif`` chain is 1,000 nested ``If`` nodes) is one INP105 finding, never
    an error of the whole scan."""
    try:
        return _analyze_source(source, prefilter=prefilter)
    except RecursionError:
        return CodeResult([_raw(I.SYNTAX_ERROR, 1, 0, "cannot analyse: the code nests deeper than the analysis can "
                                "walk (RecursionError); the file's code was not checked")], parsed=False)


def _analyze_source(source: str | bytes, *, prefilter: bool | None = None) -> CodeResult:
    """Analyse one Python source (text, or bytes decoded per PEP 263).

    Returns a :class:`CodeResult`; a source that does not parse yields one INP105 (or INP106 for
    Python 2) finding and ``parsed=False``. Never raises on bad input. With the prefilter on
    (``prefilter``, default :data:`PREFILTER`), a source without any trigger word
    (:mod:`mpsready.scan.code.triggers`) is parsed (so syntax errors are still INP105/INP106) and
    only its import statements (DEP107, and the imports other files' fallbacks depend on) and
    suppression comments are analysed; in a source with trigger words, statements that span no
    trigger line are not entered (their imports and assignments are still recorded).
    """
    if isinstance(source, bytes):
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
            text = source.decode(encoding)
        except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
            return CodeResult([_raw(I.NOT_TEXT, 1, 0, f"cannot decode Python source: {exc}")], parsed=False)
    else:
        text = source
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences etc. in old code
            tree = ast.parse(text)
    except SyntaxError as exc:
        return CodeResult([_syntax_finding(exc, text)], parsed=False)
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        why = str(exc) or "nested too deeply for Python's parser"  # MemoryError: the parser's stack ran out
        return CodeResult([_raw(I.SYNTAX_ERROR, 1, 0, f"cannot parse: {why} ({type(exc).__name__})")], parsed=False)
    live_lines = None
    if PREFILTER if prefilter is None else prefilter:
        # DEP107 (an import of a knowledge-base package) is judged on the import statements themselves,
        # which every source gets; the other rules need a trigger word somewhere in the text
        if not may_fire(text, line_trigger_words()):
            visitor = _Visitor(build_alias_map(tree), tree)
            visitor.collect_imports(tree.body)
            visitor.result.suppress = _suppressions(text) if "mpsready:" in text else {}
            _guard_by_callers(tree, visitor.result.imports)
            _model_summaries(tree, text, visitor.result)
            return visitor.result
        if "\r" not in text:  # ast counts a lone \r as a line break too; trigger_lines splits at \n only
            live_lines = _live_lines(tree, text)
    visitor = _Visitor(build_alias_map(tree), tree, cu_literals=_names_cu_file(text), live_lines=live_lines)
    if "set_default_" not in text:
        visitor._default_device = False  # no set_default_device / set_default_tensor_type call: no walk needed
    try:
        visitor.visit(tree)
    except RecursionError:
        visitor.result.findings.append(_raw(I.SYNTAX_ERROR, 1, 0, "nesting too deep to analyse"))
    visitor.result.suppress = _suppressions(text) if "mpsready:" in text else {}
    _guard_by_callers(tree, visitor.result.imports)
    _model_summaries(tree, text, visitor.result)
    return visitor.result


_PURE_SUFFIXES = ("_pytorch", "_naive", "_native", "_ref", "_reference", "_torch")
_PURE_CALLS = tuple(s + "(" for s in _PURE_SUFFIXES)


def _is_entry(tree: ast.Module) -> bool:
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


def _main_guards(tree: ast.Module) -> list[list[int]]:
    """[first, last] line of the body of each module-level ``if __name__ == "__main__":`` (either operand order)."""
    out = []
    for st in tree.body:
        if isinstance(st, ast.If) and isinstance(st.test, ast.Compare) and len(st.test.ops) == 1 \
                and isinstance(st.test.ops[0], ast.Eq) and st.body:
            sides = [st.test.left, st.test.comparators[0]]
            names = [s.id for s in sides if isinstance(s, ast.Name)]
            consts = [s.value for s in sides if isinstance(s, ast.Constant)]
            if names == ["__name__"] and consts == ["__main__"]:
                out.append([st.lineno, st.body[-1].end_lineno or st.body[-1].lineno])
    return out


def _launched_paths(tree: ast.Module) -> list[str]:
    """String literals given to a call, directly or in a list or tuple argument, that look like a path to a
    Python file: ``subprocess.run(["python", "scripts/ppo.py"])``, ``Tuner(script="cleanrl/ppo.py")``.
    Whether the file exists is the project model's question (:mod:`mpsready.scan.model.graph`)."""
    found: dict[str, None] = {}
    for node in _walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            for item in (arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]):
                if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value.endswith(".py") \
                        and not any(c.isspace() for c in item.value):
                    found[item.value] = None
    return list(found)


def _model_summaries(tree: ast.Module, text: str, result: CodeResult) -> None:
    """The per-file parts of the project model that do not need the visitor: configuration surfaces,
    pure-PyTorch reference functions and their uses, and whether anything is placed on a device (plain
    substring tests decide only whether a walk is worth it)."""
    result.surfaces = surfaces.collect(tree, text)
    result.entry = _is_entry(tree)
    result.def_spans = [[item.name, item.lineno, item.end_lineno or item.lineno]
                        for node in tree.body for item in (node.body if isinstance(node, ast.ClassDef) else [node])
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
    result.main_guards = _main_guards(tree)
    if ".py'" in text or '.py"' in text:
        result.launches = _launched_paths(tree)
    result.places = any(w in text for w in (".to(", ".cuda(", "device=", "torch.device", "set_default_device"))
    if '"mps' in text or "'mps" in text:  # a compared 'mps' is a quoted literal: the walk is worth it only then
        result.mps_on_request = any(
            n.__class__ is ast.Compare and any(c.__class__ is ast.Constant and c.value in ("mps", "mps:0")
                                               for c in (n.left, *n.comparators)) for n in _walk(tree))
    defs = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.endswith(_PURE_SUFFIXES) \
                and not node.name.startswith("test"):
            defs[node.name] = node.lineno
    result.pure_defs = [[name, line] for name, line in defs.items()]
    # uses are searched only in sources that call such a name (`attn_core_pytorch(`): the walk over the whole
    # tree is the expensive part, and most sources have no such call
    if not any(call in text for call in _PURE_CALLS):
        return
    refs = set()
    for node in _walk(tree):
        # a use is a Name or an attribute; an import of the name alone wires nothing
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name and name.endswith(_PURE_SUFFIXES):
            refs.add(name)
    result.pure_refs = sorted(refs)


def _guard_by_callers(tree: ast.Module, imports: list[list[Any]]) -> None:
    """Mark an unguarded import inside a module-level function as guarded when every use of that function
    in this module is a call inside a try/except with a fallback (whisper's ``dtw_cuda()`` imports its
    Triton kernel and is called only under ``try: ... except (RuntimeError, ...)``). The guard becomes
    the function's name (truthy), so the engine can still refuse it when another file imports the function."""
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    pending: list[tuple[list[Any], ast.AST]] = []
    for entry in imports:
        if entry[4]:
            continue
        line = entry[3]
        fn = next((f for f in functions.values() if f.lineno <= line <= (f.end_lineno or f.lineno)), None)
        if fn is not None:
            pending.append((entry, fn))
    if not pending:
        return
    verdicts = _only_called_under_fallback(tree, {fn.name: fn for _, fn in pending})
    for entry, fn in pending:
        if verdicts[fn.name]:
            entry[4] = fn.name


_ALL_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _only_called_under_fallback(tree: ast.Module, candidates: dict[str, ast.AST]) -> dict[str, bool]:
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
        if cls is ast.FunctionDef or cls is ast.AsyncFunctionDef or cls is ast.ClassDef:
            name = own.get(id(node))
            if name is not None:
                owner = name  # the candidate itself: its body does not decide its own verdict
            elif node.name in calls and node.name != owner:
                bad.add(node.name)  # redefined: the calls may mean another function
        elif cls is ast.Call and node.func.__class__ is ast.Name:
            name = node.func.id
            if name in calls and name != owner:
                if guarded:
                    calls[name] += 1
                else:
                    bad.add(name)
            stack += [(child, guarded, owner) for child in (*node.args, *node.keywords)]
            continue
        elif cls is ast.Name:
            if node.id in calls and node.id != owner:
                bad.add(node.id)  # passed around, rebound or exported by value
            continue
        elif cls is ast.Try or cls.__name__ == "TryStar":
            body_guarded = guarded or any(_is_fallback_handler(h) for h in node.handlers)
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


def _names_mps_word(text: str) -> bool:
    """Whether a string names MPS as a word ('mps', 'mps:0', 'cuda, mps or cpu'), not inside another word:
    '--word_timestamps' and 'lamps' do not (whisper's CLI options hid its CUDA-or-CPU default)."""
    if "mps" not in text.lower():
        return False
    return "mps" in "".join(c if c.isalnum() else " " for c in text.lower()).split()


def _mentions_mps(tree: ast.AST) -> bool:
    """Whether the scope considers MPS as a device: an 'mps' string it can choose, or a ``.mps`` attribute
    (``torch.backends.mps.is_available()``). An 'mps' string that is only compared against
    (``device.type != 'mps'``, ``'mps' in name``) tests a device chosen elsewhere and does not count
    (Pytorch-UNet picks CUDA-or-CPU and only then asks whether the device is MPS). The device helper
    ``mpsready migrate`` adds (``def _mpsready_device``) does not count either: it is not the scope's own choice,
    and counting it hid a selection migrate had left as it was from the re-scan."""
    compared: set[int] = set()
    nodes = list(_walk_without_helper(tree))
    for n in nodes:
        if isinstance(n, ast.Compare):
            compared.update(id(c) for c in (n.left, *n.comparators) if isinstance(c, ast.Constant))
    for n in nodes:
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and _names_mps_word(n.value) and id(n) not in compared:
            return True
        if isinstance(n, ast.Attribute) and n.attr == "mps":
            return True
    return False


def off_by_default(name: str, fns: list) -> bool:
    """Whether ``name`` is a parameter of one of ``fns`` (``ast.FunctionDef``, innermost first) whose default is
    ``False`` or ``None``; the first function that has the parameter decides."""
    for fn in fns:
        args = fn.args
        pos = args.posonlyargs + args.args
        pairs = list(zip(pos[len(pos) - len(args.defaults):], args.defaults)) + [
            (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        for a, d in pairs:
            if a.arg == name:
                return isinstance(d, ast.Constant) and d.value in (False, None)
    return False


def _walk_without_helper(tree: ast.AST):
    """``ast.walk`` that does not enter ``def _mpsready_device`` (mpsready.migrate.helper)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not (isinstance(child, ast.FunctionDef) and child.name == "_mpsready_device"):
                todo.append(child)


def _raw(rule, line: int, col: int, message: str, *, severity: Severity | None = None, fix: str | None = None,
         evidence: dict[str, Any] | None = None, scope: str | None = None,
         end: tuple[int | None, int | None] | None = None) -> dict[str, Any]:
    """One raw finding. ``line`` is 1-based, ``col`` an ``ast`` column (0-based UTF-8 byte offset) stored
    1-based; ``end`` is the node's ``(end_lineno, end_col_offset)``, stored as ``end_line`` and the 1-based
    byte column just past the node (``end_column``); outputs convert byte columns to code points
    (:mod:`mpsready.scan.formats.locate`)."""
    d: dict[str, Any] = {
        "code": rule.code, "severity": (severity or rule.severity).value, "line": line, "column": col + 1,
        "message": message, "fix": fix or rule.fix, "source": rule.source, "evidence": evidence or {},
    }
    if end is not None and end[0] is not None and end[1] is not None:
        d["end_line"], d["end_column"] = end[0], end[1] + 1
    if scope:
        d["scope"] = scope
    return d


def _end(node: ast.AST) -> tuple[int | None, int | None]:
    """A node's ``(end_lineno, end_col_offset)`` (``None`` for nodes without positions)."""
    return getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)


def _syntax_finding(exc: SyntaxError, text: str) -> dict[str, Any]:
    line = exc.lineno or 1
    msg = exc.msg or "invalid syntax"
    py2_markers = ("Missing parentheses in call to 'print'", "Missing parentheses in call to 'exec'",
                   "multiple exception types must be parenthesized")
    is_py2 = any(m in msg for m in py2_markers) or _looks_python2(text)
    rule = I.PYTHON2 if is_py2 else I.SYNTAX_ERROR
    what = "Python 2 source" if is_py2 else "syntax error"
    ver = f"{sys.version_info.major}.{sys.version_info.minor}"
    return _raw(rule, line, (exc.offset or 1) - 1, f"{what}: {msg} (line {line}, parsed as Python {ver}); not analysed")


def _looks_python2(text: str) -> bool:
    """Python 2 constructs seen by the tokenizer: backquotes, ``<>``, ``print`` followed by a string."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return False
    prev = None
    for tok in toks:
        if tok.type == tokenize.ERRORTOKEN and tok.string == "`":
            return True
        if tok.type == tokenize.OP and tok.string == "<>":
            return True
        if prev is not None and prev.type == tokenize.NAME and prev.string == "print" and tok.type == tokenize.STRING \
                and prev.start[1] == _indent_of(prev.line):
            return True
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            prev = tok
    return False


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def _suppressions(text: str) -> dict[str, list[str]]:
    """``# mpsready: ignore[CODE, ...]`` (or bare ``# mpsready: ignore``) comments, by line, via tokenize."""
    out: dict[str, list[str]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                codes = parse_suppression(tok.string)
                if codes is not None:
                    out[str(tok.start[0])] = codes
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return out


def parse_suppression(comment: str) -> list[str] | None:
    """Codes named by one comment's ``mpsready: ignore[...]`` directive; ``["*"]`` for a bare ignore."""
    body = comment.lstrip("#").strip()
    marker = "mpsready:"
    pos = body.find(marker)
    if pos < 0:
        return None
    rest = body[pos + len(marker):].strip()
    if not rest.startswith("ignore"):
        return None
    rest = rest[len("ignore"):].strip()
    if not rest.startswith("["):
        return ["*"]
    inner = rest[1:].split("]", 1)[0]
    return [c.strip().upper() for c in inner.split(",") if c.strip()]


_QUALIFIED_HEADS = ("torch.", "cupy.")  # every name a QualifiedName unit can report starts so
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_LEAF_FIELDS = {"ctx", "type_comment", "kind", "name", "id", "attr", "arg", "module", "level", "op", "conversion",
                "is_async", "simple", "lineno", "col_offset", "end_lineno", "end_col_offset", "value_str",
                # type annotations run nothing: `s: torch.cuda.Stream` neither initialises CUDA nor makes a tensor
                "annotation", "returns"}


def _walk(node: ast.AST):
    """ast.walk without expression contexts and leaf fields (faster on the small trees of `if` tests)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        cls = n.__class__
        fields = _CHILD_FIELDS.get(cls)
        if fields is None:
            fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _LEAF_FIELDS)
        for name in fields:
            value = getattr(n, name, None)
            if value.__class__ is list:
                stack.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)


def _skip(self: "_Visitor", node: ast.AST) -> None:
    """Dispatch target for nodes that can neither fire nor hold a node that can."""


# statements that hold no other statement and are neither an import nor an assignment
_LEAF_STATEMENTS = frozenset((ast.Expr, ast.Return, ast.AugAssign, ast.AnnAssign, ast.Raise, ast.Pass, ast.Break,
                              ast.Continue, ast.Delete, ast.Global, ast.Nonlocal, ast.Assert))


def _statements(body: list[ast.stmt], imports: list[ast.stmt], assigns: list[ast.Assign]) -> None:
    """Every import and assignment statement, at any depth (expressions are not entered)."""
    for stmt in body:
        cls = stmt.__class__
        if cls in _LEAF_STATEMENTS:
            continue
        if cls is ast.Import or cls is ast.ImportFrom:
            imports.append(stmt)
        elif cls is ast.Assign:
            assigns.append(stmt)
        elif cls is ast.Match:
            for case in stmt.cases:
                _statements(case.body, imports, assigns)
        elif cls is not ast.Expr:
            for name in ("body", "orelse", "finalbody"):
                block = getattr(stmt, name, None)
                if block:
                    _statements(block, imports, assigns)
            for handler in getattr(stmt, "handlers", ()):
                _statements(handler.body, imports, assigns)


def _mentions(node: ast.AST, names: set[str]) -> bool:
    """Whether an expression uses one of ``names`` (as a name or as an attribute: ``self.betas``)."""
    return any((n.__class__ is ast.Name and n.id in names) or (n.__class__ is ast.Attribute and n.attr in names)
               for n in ast.walk(node))


def _live_lines(tree: ast.Module, text: str) -> list[int]:
    """Lines on which a finding can start: those holding a trigger word, a name bound by an import to a
    trigger-bearing module path (`import torch.cuda as tc`, `from numpy import zeros`), or a variable the
    analyser follows from its assignment to its use: one assigned a CUDA device literal (`dev = "cuda"`,
    later `.to(dev)`), a NumPy call / `.astype` (`a = np.zeros(3)`, later `torch.from_numpy(a).to(d)`), a
    call with a float64 `dtype=` (`b = torch.linspace(..., dtype=torch.float64)`, later `register_buffer("b", b)`),
    or arithmetic, slicing or a call over a variable followed so far (`alphas = 1.0 - betas`). Assignments are
    taken in source order, which is the order the analyser binds them in, so one round is enough."""
    words = set(line_trigger_words())
    imports: list[ast.stmt] = []
    assigns: list[ast.Assign] = []
    _statements(tree.body, imports, assigns)
    extra: set[str] = set()
    numpy_names = {"numpy"}  # an unimported `numpy.zeros` resolves as written
    for node in imports:
        if node.__class__ is ast.Import:
            pairs = [(a.asname, a.name) for a in node.names if a.asname]
        elif node.module and not node.level:
            pairs = [(a.asname or a.name, f"{node.module}.{a.name}") for a in node.names if a.name != "*"]
        else:
            continue
        for local, target in pairs:
            if local not in words and any(part in words for part in target.split(".")):
                extra.add(local)
            if target == "numpy" or target.startswith("numpy."):
                numpy_names.add(local)
    lines = set(trigger_lines(text))
    if extra:
        lines.update(trigger_lines(text, tuple(extra)))
    bound: set[str] = set()
    for node in assigns:  # in source order, so a name bound from a followed one is followed too
        value = node.value
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
                for k in value.keywords) or (bool(bound) and _mentions(value, bound))
        else:  # arithmetic or slicing over a followed name: `alphas = 1.0 - betas`
            follow = bool(bound) and value.__class__ in (ast.BinOp, ast.UnaryOp, ast.Subscript) and _mentions(value, bound)
        if follow:
            for target in node.targets:
                name = target.id if target.__class__ is ast.Name else \
                    target.attr if target.__class__ is ast.Attribute else None
                if name is not None and name not in words and name not in extra:
                    bound.add(name)
    if bound:
        lines.update(trigger_lines(text, tuple(bound)))
    return sorted(lines)


def _pruned(method: Any) -> Any:
    """A statement handler that visits live statements and only bookkeeps the others."""
    def visit_statement(self: "_Visitor", node: ast.stmt) -> None:
        if self._is_live(node):
            method(self, node)
        else:
            self._bookkeep(node, True)
    return visit_statement


def _names_cu_file(text: str) -> bool:
    """Whether a string literal may end in .cu/.cuh (the closing quote follows the suffix): else the
    visitor skips every Constant node, the most common node after Name."""
    return '.cu"' in text or ".cu'" in text or ".cuh" in text


class _Visitor(ast.NodeVisitor):
    def __init__(self, aliases: AliasMap, tree: ast.Module, *, cu_literals: bool = True,
                 live_lines: list[int] | None = None) -> None:
        self.aliases = aliases
        self.result = CodeResult()
        self.api = knowledge.cuda_api_table()
        self.try_stack: list[ast.Try] = []  # enclosing try statements whose handlers are fallbacks
        self.cuda_guard = 0  # depth of enclosing `if <cuda available>:` bodies
        self.dist_context = 0  # depth of enclosing distributed-only code (if ddp:, def all_gather)
        self.reported_packages: set[str] = set()  # DEP107 once per package per file
        self.passive_dtype = 0  # inside comparisons and dict tables: a dtype named there creates no tensor
        self._inits: dict[int, list] | None = None  # id(method) -> [its class's __init__] (_param_off_by_default)
        self.iterated: set[int] = set()  # id() of the iterables of for loops and comprehensions (visit_Tuple)
        self.mps_excluded = 0  # depth of branches a tensor on MPS never takes (`if x.device.type != "mps":`)
        self.in_test = 0  # inside the condition of an if / conditional expression
        self.compared: set[int] = set()  # id() of calls that are an operand of a comparison (or its attribute)
        self.device_defaults: set[int] = set()  # id() of torch.device('cuda') parameter defaults (reported as such)
        self.string_vars: dict[str, tuple[str, int]] = {}  # name -> (string literal, line) for simple assignments
        self.choice_vars: dict[str, ast.IfExp] = {}  # name -> `"a" if test else "b"` it was assigned
        self.option_vars: dict[str, str] = {}  # name -> the option it holds (`opt_lower = args.opt.lower()`)
        self.np_f64_vars: set[str] = set()
        self.torch_f64_vars: dict[str, int] = {}  # name -> line of a CPU float64 torch tensor bound to it
        self.cpu_f64_nodes: dict[int, str] = {}  # id() of float64 dtype names making a CPU tensor -> the factory
        self._moved_calls: set[int] = set()  # id() of calls whose result is moved to a device in the same chain
        self._default_device: bool | None = None  # whether the file sets a default device or tensor type
        self.cpu_vars: set[str] = set()  # names holding a CPU tensor made from NumPy (torch.from_numpy(a), x.cpu())
        self.call_vars: dict[str, str] = {}  # name -> short name of the project function whose result it holds
        self.selection_reported: set[int] = set()
        self._param_default: str | None = None  # the function whose parameter defaults are being visited  # id() of functions (or the module) with an API104 already
        self.tree = tree
        self.functions: list[ast.AST] = []  # enclosing function definitions, innermost last
        self.kernel_lib_guard: dict[str, str | None] = {}  # triton/cupy/... -> fallback location or None
        self._dispatch: dict[type, Any] = {} if cu_literals else {ast.Constant: _skip}
        # `if` conditions whose guard value is computed only when a finding (or an import) needs it:
        # [kind ('cuda' or 'dist'), test, None (not computed) or the result]; innermost last
        self._lazy_guards: list[list[Any]] = []
        # lines holding a trigger word (None: every statement is live); a statement spanning none of them
        # cannot fire and only gets its bookkeeping (imports, try context, assignments)
        self._live_lines = live_lines
        self._unresolved = 0
        self._guarded_build: dict[int, int | None | bool] = {}  # id(function) -> fallback line (cached)

    # ---------------------------------------------------------------- imports only
    _BLOCKS = ("body", "orelse", "finalbody")

    def collect_imports(self, body: list[ast.stmt], track_assigns: bool = False) -> None:
        """Record the imports of a source that cannot fire (its imports still decide whether another file's
        kernel is imported only under a fallback), in the order and with the try/except context the full
        traversal gives them. Imports sit only in statements, so expressions are not entered. With
        ``track_assigns`` (a statement that cannot fire inside a source that can), assignments also update
        the string and NumPy-variable tables later statements read."""
        for stmt in body:
            self._bookkeep(stmt, track_assigns)

    def _bookkeep(self, stmt: ast.stmt, track_assigns: bool) -> None:
        cls = stmt.__class__
        if cls is ast.Return and track_assigns:
            self._note_return(stmt)
            return
        if cls in _LEAF_STATEMENTS:
            return
        if cls is ast.Import:
            self.visit_Import(stmt)
        elif cls is ast.ImportFrom:
            self.visit_ImportFrom(stmt)
        elif cls is ast.Assign:
            if track_assigns:
                self._track_assign(stmt)
        elif cls is ast.Try or cls.__name__ == "TryStar":
            self.try_stack.append(stmt)
            self.collect_imports(stmt.body, track_assigns)
            self.try_stack.pop()
            for handler in stmt.handlers:
                self.collect_imports(handler.body, track_assigns)
            self.collect_imports(stmt.orelse, track_assigns)
            self.collect_imports(stmt.finalbody, track_assigns)
        elif cls is ast.Match:
            for case in stmt.cases:
                self.collect_imports(case.body, track_assigns)
        elif cls is not ast.Expr:
            for name in self._BLOCKS:
                block = getattr(stmt, name, None)
                if block:
                    self.collect_imports(block, track_assigns)

    def _is_live(self, node: ast.stmt) -> bool:
        """Whether a trigger line falls within the statement (its decorators included)."""
        start = node.lineno
        decorators = getattr(node, "decorator_list", None)
        if decorators:
            start = min(start, *(d.lineno for d in decorators))
        lines = self._live_lines
        i = bisect_left(lines, start)
        return i < len(lines) and lines[i] <= node.end_lineno

    # ---------------------------------------------------------------- traversal
    # NodeVisitor.visit builds a method name and calls getattr for every node, and generic_visit
    # walks every field (expression contexts included); this dispatch caches both per node class.
    def _method(self, cls: type) -> Any:
        """The handler of a node class: its visit_ method, generic_visit when it has child nodes, else _skip
        (also for the strings and None that some child lists hold)."""
        method = getattr(type(self), "visit_" + cls.__name__, None)
        if method is None:
            if not issubclass(cls, ast.AST):
                method = _skip
            else:
                fields = _CHILD_FIELDS.get(cls)
                if fields is None:
                    fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _LEAF_FIELDS)
                method = type(self).generic_visit if fields else _skip
        if self._live_lines is not None and issubclass(cls, ast.stmt):
            method = _pruned(method)
        self._dispatch[cls] = method
        return method

    def visit(self, node: ast.AST) -> None:
        cls = node.__class__
        method = self._dispatch.get(cls) or self._method(cls)
        method(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        cls = node.__class__
        fields = _CHILD_FIELDS.get(cls)
        if fields is None:
            fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _LEAF_FIELDS)
        dispatch = self._dispatch
        for name in fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    cls = item.__class__
                    (dispatch.get(cls) or self._method(cls))(self, item)
            elif value is not None:
                cls = value.__class__
                (dispatch.get(cls) or self._method(cls))(self, value)

    # ---------------------------------------------------------------- lazy guards
    def _push_guard(self, kind: str, test: ast.AST) -> list[Any]:
        entry = [kind, test, None]
        self._lazy_guards.append(entry)
        self._unresolved += 1
        return entry

    def _pop_guard(self, entry: list[Any]) -> None:
        self._lazy_guards.pop()
        if entry[2] is None:
            self._unresolved -= 1
        elif entry[2]:
            if entry[0] == "cuda":
                self.cuda_guard -= 1
            else:
                self.dist_context -= 1

    def _resolve_guards(self) -> None:
        """Compute the pending guard tests (before reading cuda_guard/dist_context, and before an import
        changes the aliases the tests are resolved with). Most `if` bodies hold no finding, so most tests
        are never computed."""
        if not self._unresolved:
            return
        for entry in self._lazy_guards:
            if entry[2] is None:
                if entry[0] == "cuda":
                    entry[2] = self._is_cuda_test(entry[1])
                    self.cuda_guard += entry[2]
                else:
                    entry[2] = self._is_distributed_test(entry[1])
                    self.dist_context += entry[2]
        self._unresolved = 0

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if value.__class__ is str and value.endswith((".cu", ".cuh")) and "\n" not in value:
            scope = self.functions[-1] if self.functions else self.tree
            guard = self._guarded_build.get(id(scope), False)
            if guard is False:
                guard = self._guarded_build[id(scope)] = _guarded_build_line(scope)
            self.result.cu_refs.append([value.replace("\\", "/").rsplit("/", 1)[-1], node.lineno, guard])

    def visit_Compare(self, node: ast.Compare) -> None:
        # calls compared against directly, or through one attribute (`dev == torch.device("cuda")`,
        # `dev.type == torch.device("cuda").type`): they build a value to test, move nothing
        for x in (node.left, *node.comparators):
            if x.__class__ is ast.Attribute:
                x = x.value
            if x.__class__ is ast.Call:
                self.compared.add(id(x))
        self.passive_dtype += 1
        self.generic_visit(node)
        self.passive_dtype -= 1

    def visit_Dict(self, node: ast.Dict) -> None:
        self.passive_dtype += 1
        self.generic_visit(node)
        self.passive_dtype -= 1

    def visit_Tuple(self, node: ast.Tuple | ast.List | ast.Set) -> None:
        """A literal naming two or more dtypes (``allowed=(torch.float32, torch.float64)``) is a list of accepted
        types, like a dict table: a dtype named there creates no tensor (issue 23); one a ``for`` loop or a
        comprehension iterates over (``for dt in (torch.float32, torch.float64):``) makes each of them."""
        elts = node.elts
        if len(elts) > 1 and id(node) not in self.iterated:
            n = 0
            for e in elts:
                cls = e.__class__
                if (cls is ast.Attribute and e.attr in _DTYPE_WORDS) or (cls is ast.Name and e.id in _DTYPE_BARE):
                    n += 1
                    if n > 1:
                        self.passive_dtype += 1
                        self.generic_visit(node)
                        self.passive_dtype -= 1
                        return
        self.generic_visit(node)

    visit_List = visit_Set = visit_Tuple

    def visit_For(self, node: ast.For | ast.AsyncFor | ast.comprehension) -> None:
        self.iterated.add(id(node.iter))
        self.generic_visit(node)

    visit_AsyncFor = visit_comprehension = visit_For

    # ---------------------------------------------------------------- helpers
    def add(self, rule, node: ast.AST, message: str, **kw: Any) -> None:
        self._resolve_guards()
        severity = kw.pop("severity", None) or rule.severity
        evidence = kw.pop("evidence", None) or {}
        if self.cuda_guard and rule.code.startswith("API") and rule.code not in ("API104", "API115"):
            # every API finding inside a CUDA check says so, whatever its severity; those above info drop to it
            user = self._user_flag_guard()
            if user is not None:  # `if args.cuda:`: a check only if the option's value flows from availability
                evidence = {**evidence, "user_flag_guard": user, "unguarded_severity": severity.value}
            severity = Severity.INFO if severity.rank > Severity.INFO.rank else severity
            evidence = {**evidence, "guarded": True}
            message += " (inside a CUDA-availability check, so skipped on a Mac)"
        if self.mps_excluded and rule.code.startswith(("API", "DTY")) and severity.rank > Severity.INFO.rank:
            # the project's own MPS check keeps this branch off MPS (issue 23: it already picks MPS)
            severity = Severity.INFO
            evidence = {**evidence, "mps_excluded": True}
            message += " (in a branch that a tensor on MPS never takes)"
        if self.dist_context and "scope" not in kw:
            kw["scope"] = "distributed"
        switch = self._flag_guard()
        if isinstance(switch, tuple):  # `if 'fused' in args.opt.lower():` -> the option and the test on its value
            evidence = {**evidence, "flag_guard": switch[0], "flag_test": [switch[1], switch[2]]}
        elif switch is not None:
            evidence = {**evidence, "flag_guard": switch}
            if self.functions and self._param_off_by_default(switch):
                evidence["param_guard"] = switch
        self.result.findings.append(_raw(rule, getattr(node, "lineno", 1), getattr(node, "col_offset", 0), message,
                                         severity=severity, evidence=evidence, end=_end(node), **kw))

    def q(self, node: ast.AST) -> str | None:
        return self.aliases.qualname(node)

    def _auto_device_guard(self) -> tuple[str, str] | None:
        """The device setting an enclosing `if config.device == 'auto':` / `if args.device is None:` tests (as
        written, ``config.device``) and the value it tests for (``'auto'`` or ``None``, as written), or ``None``."""
        for entry in reversed(self._lazy_guards):
            test = entry[1]
            if entry[0] != "cuda" or not isinstance(test, ast.Compare) or len(test.ops) != 1:
                continue
            left, right = test.left, test.comparators[0]
            label = left.attr if isinstance(left, ast.Attribute) else left.id if isinstance(left, ast.Name) else ""
            if "device" not in label.lower():
                continue
            if (isinstance(test.ops[0], ast.Eq) and isinstance(right, ast.Constant) and right.value == "auto") or (
                    isinstance(test.ops[0], ast.Is) and isinstance(right, ast.Constant) and right.value is None):
                return _dotted(left) or label, repr(right.value)
        return None

    def _param_off_by_default(self, name: str) -> bool:
        """Whether ``name`` is a parameter of an enclosing function, or of the ``__init__`` of the class around the
        innermost method (``if self.flash:`` in ``forward`` with ``__init__(self, flash=False)``), whose default is
        ``False`` or ``None``: code behind it runs only when a caller turns it on (issue 23)."""
        fns = list(self.functions)
        if self._inits is None:  # method -> its class's __init__, built once per file on first need
            self._inits = {}
            stack = list(self.tree.body) if self.tree is not None else []
            while stack:  # statements only: classes sit in statement bodies, never inside expressions
                stmt = stack.pop()
                if stmt.__class__ is ast.ClassDef:
                    init = [s for s in stmt.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"]
                    for s in stmt.body:
                        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            self._inits[id(s)] = init
                for part in ("body", "orelse", "finalbody"):
                    block = getattr(stmt, part, None)
                    if block.__class__ is list:
                        stack += block
                for handler in getattr(stmt, "handlers", ()):
                    stack += handler.body
        fns += self._inits.get(id(self.functions[-1]), [])
        return off_by_default(name, fns)

    def _user_flag_guard(self) -> str | None:
        """The attribute (``cuda`` of ``if args.cuda:``) when every CUDA guard around this point is a plain test
        of an attribute named for CUDA: maybe a user's flag rather than a CUDA-availability check. The engine
        decides from the project's options and assignments (``model.project.user_flag_guards``)."""
        guards = [e for e in self._lazy_guards if e[0] == "cuda" and e[2]]
        if not guards or len(guards) != self.cuda_guard:
            return None
        names = set()
        for e in guards:
            test = e[1]
            if not (isinstance(test, ast.Attribute) and isinstance(test.value, (ast.Name, ast.Attribute))
                    and "cuda" in test.attr.lower()):
                return None
            names.add(test.attr)
        return names.pop() if len(names) == 1 else None

    def _flag_guard(self) -> str | tuple[str, str, str] | None:
        """The option an enclosing `if args.use_triton:` (or `if use_triton:`) tests, innermost first, or
        ``(option, "in" | "eq", value)`` for a test on an option's value (`if 'fused' in args.opt.lower():`,
        `if opt_lower == 'lamb':` with `opt_lower = args.opt.lower()`, ConvNeXt's optimizer factory); the
        engine decides from the project's configuration surfaces whether it is off by default."""
        for entry in reversed(self._lazy_guards):
            if entry[0] != "cuda":
                continue
            test = entry[1]
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.In, ast.Eq)):
                left, right = test.left, test.comparators[0]
                const, subject = (left, right) if isinstance(left, ast.Constant) else (right, left)
                option = self._option_of(subject)
                if isinstance(const, ast.Constant) and isinstance(const.value, str) and option:
                    return option, "in" if isinstance(test.ops[0], ast.In) else "eq", const.value
            if isinstance(test, ast.Attribute) and isinstance(test.value, (ast.Name, ast.Attribute)):
                return test.attr
            if isinstance(test, ast.Name):
                return test.id
        return None

    def _option_of(self, node: ast.AST) -> str | None:
        """The option a value reads: ``args.opt`` / ``args.opt.lower()`` -> ``opt``, or a name bound to one."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args \
                and node.func.attr in ("lower", "strip", "upper", "casefold"):
            node = node.func.value
        if isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute)):
            return node.attr
        if isinstance(node, ast.Name):
            return self.option_vars.get(node.id)
        return None

    def _fallback_guard(self) -> str | None:
        """Line of the nearest enclosing try/except whose handler provides a fallback, or ``None``."""
        for tr in reversed(self.try_stack):
            for h in tr.handlers:
                if _is_fallback_handler(h):
                    return str(h.lineno)
        return None

    def _literal(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return None

    def _string_value(self, node: ast.AST) -> tuple[str | None, int | None]:
        """A string literal, or the literal a simple name was assigned (with that line)."""
        lit = self._literal(node)
        if lit is not None:
            return lit, None
        if isinstance(node, ast.Name) and node.id in self.string_vars:
            return self.string_vars[node.id]
        if isinstance(node, ast.Attribute):
            key = _dotted(node)
            if key and key in self.string_vars:
                return self.string_vars[key]
        return None, None

    # ---------------------------------------------------------------- structure
    def visit_Try(self, node: ast.Try) -> None:
        self.try_stack.append(node)
        for stmt in node.body:
            self.visit(stmt)
        self.try_stack.pop()
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    visit_TryStar = visit_Try

    def visit_If(self, node: ast.If) -> None:
        self.in_test += 1
        self.visit(node.test)
        self.in_test -= 1
        for unit in _UNITS.get(ast.If, ()):
            unit(self, node)
        guarded = self._push_guard("cuda", node.test)
        dist = self._push_guard("dist", node.test)
        off_mps = _mps_branch(node.test)
        self.mps_excluded += off_mps == "body"
        for stmt in node.body:
            self.visit(stmt)
        self.mps_excluded -= off_mps == "body"
        self._pop_guard(dist)
        self._pop_guard(guarded)
        if not node.orelse:
            return
        test = node.test
        negated = self._push_guard("cuda", test.operand) \
            if test.__class__ is ast.UnaryOp and test.op.__class__ is ast.Not else None
        self.mps_excluded += off_mps == "orelse"
        for stmt in node.orelse:
            self.visit(stmt)
        self.mps_excluded -= off_mps == "orelse"
        if negated is not None:
            self._pop_guard(negated)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.in_test += 1
        self.visit(node.test)
        self.in_test -= 1
        for unit in _UNITS.get(ast.IfExp, ()):
            if unit(self, node):
                return  # judged whole (a device selection): its branches are not reported again
        guarded = self._push_guard("cuda", node.test)
        off_mps = _mps_branch(node.test)
        self.mps_excluded += off_mps == "body"
        self.visit(node.body)
        self.mps_excluded -= off_mps == "body"
        self._pop_guard(guarded)
        self.mps_excluded += off_mps == "orelse"
        self.visit(node.orelse)
        self.mps_excluded -= off_mps == "orelse"

    def _is_distributed_test(self, test: ast.AST) -> bool:
        """`if ddp:`, `if args.distributed:`, `if world_size > 1:` and the like: multi-GPU-only code."""
        for n in _walk(test):
            if isinstance(n, ast.Name) and _is_distributed_name(n.id):
                return True
            if isinstance(n, ast.Attribute) and _is_distributed_name(n.attr):
                return True
        return False

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """In `torch.cuda.is_available() and torch.cuda.X()`, X never runs on a Mac."""
        guarded = 0
        for value in node.values:
            self.visit(value)
            if isinstance(node.op, ast.And) and not guarded and self._is_cuda_test(value):
                guarded = 1
                self.cuda_guard += 1
        self.cuda_guard -= guarded

    def _is_cuda_test(self, test: ast.AST) -> bool:
        """A condition that is False on a Mac: torch.cuda.is_available(), device == 'cuda', args.cuda, use_cuda.
        A negated one is True there, so its body runs on a Mac: ``not torch.cuda.is_available()``,
        ``x.device != torch.device("cuda")`` (stable-diffusion's samplers then call ``.to("cuda")``); an ``and``
        is False when one of its parts is, an ``or`` only when all are."""
        cls = test.__class__
        if cls is ast.UnaryOp and isinstance(test.op, ast.Not):
            return False
        if cls is ast.BoolOp:
            parts = [self._is_cuda_test(v) for v in test.values]
            return any(parts) if isinstance(test.op, ast.And) else all(parts)
        if cls is ast.Compare and any(isinstance(op, (ast.NotEq, ast.IsNot, ast.NotIn)) for op in test.ops):
            return False
        for n in _walk(test):
            if isinstance(n, ast.Call):
                name = self.q(n.func) or ""
                if name.startswith("torch.cuda.") or name.endswith("cuda.is_available"):
                    return True
            elif isinstance(n, ast.Constant) and is_cuda_literal(n.value):
                return True
            elif isinstance(n, ast.Name) and "cuda" in n.id.lower():
                return True
            elif isinstance(n, ast.Attribute) and "cuda" in n.attr.lower() and not isinstance(n.ctx, ast.Store):
                name = self.q(n) or ""
                if not name.startswith("torch.cuda"):
                    return True
        return False

    # ---------------------------------------------------------------- imports
    def visit_Import(self, node: ast.Import) -> None:
        self._resolve_guards()
        self.aliases.add_import(node)  # imports inside functions bind from here on
        guard = self._fallback_guard()
        for alias in node.names:
            self.result.imports.append([0, alias.name, [], node.lineno, guard is not None])
            self._imported(alias.name, node, guard)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._resolve_guards()
        self.aliases.add_import_from(node)
        guard = self._fallback_guard()
        names = [a.name for a in node.names]
        self.result.imports.append([node.level, node.module or "", names, node.lineno, guard is not None])
        if node.level == 0 and node.module:
            self._imported(node.module, node, guard)

    def _imported(self, module: str, node: ast.AST, guard: str | None) -> None:
        """Note which GPU-kernel libraries are imported and whether only under a fallback, then run the
        import units."""
        top = module.split(".")[0]
        if top in _KERNEL_LIBS and top not in self.kernel_lib_guard:
            self.kernel_lib_guard[top] = guard
        elif top in _KERNEL_LIBS and guard is None:
            self.kernel_lib_guard[top] = None
        for unit in _UNITS.get(_units.ImportedModule, ()):  # DEP107, API107 (cuda_package_import, nccl_import)
            unit(self, node, module, guard)

    # ---------------------------------------------------------------- assignments (tiny data flow)
    def visit_Assign(self, node: ast.Assign) -> None:
        self._track_assign(node)
        for target in node.targets:
            if isinstance(target, ast.Attribute) and "cuda" in target.attr.lower() \
                    and target.attr not in self.result.availability_attrs and any(
                    isinstance(n, ast.Call) and (self.q(n.func) or "").startswith("torch.cuda.")
                    for n in ast.walk(node.value)):
                self.result.availability_attrs.append(target.attr)
        for unit in _UNITS.get(ast.Assign, ()):  # device_literal_assign, device_selection
            unit(self, node)
        self.generic_visit(node)

    def _track_assign(self, node: ast.Assign) -> None:
        """Remember the string literals, NumPy float64 arrays, CPU tensors and project-call results bound to
        names and attributes, for the units that read them at later statements."""
        lit = self._literal(node.value)
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                key = _dotted(target)
                if key and lit is not None:
                    self.string_vars[key] = (lit, node.lineno)
                if key and (self.np_f64_vars or node.value.__class__ is ast.Call) \
                        and self._is_numpy_f64(node.value):  # self.alphas_cumprod = np.cumprod(alphas)
                    self.np_f64_vars.add(key)
                elif key:
                    self.np_f64_vars.discard(key)
            if isinstance(target, ast.Name):
                if lit is not None:
                    self.string_vars[target.id] = (lit, node.lineno)
                if isinstance(node.value, ast.IfExp):
                    self.choice_vars[target.id] = node.value
                else:
                    self.choice_vars.pop(target.id, None)
                option = self._option_of(node.value) if isinstance(node.value, (ast.Attribute, ast.Call)) else None
                if option:
                    self.option_vars[target.id] = option
                else:
                    self.option_vars.pop(target.id, None)
                if (self.np_f64_vars or node.value.__class__ is ast.Call) and self._is_numpy_f64(node.value):
                    self.np_f64_vars.add(target.id)
                else:
                    self.np_f64_vars.discard(target.id)
                if self._is_cpu_tensor(node.value):
                    self.cpu_vars.add(target.id)
                else:
                    self.cpu_vars.discard(target.id)
                if (self.torch_f64_vars or self.cpu_vars or node.value.__class__ is ast.Call
                        and any(k.arg == "dtype" for k in node.value.keywords)) and self._is_torch_cpu_f64(node.value):
                    self.torch_f64_vars[target.id] = node.lineno
                else:
                    self.torch_f64_vars.pop(target.id, None)
                callee = _project_callee(node.value)
                if callee is not None:
                    self.call_vars[target.id] = callee
                else:
                    self.call_vars.pop(target.id, None)

    def visit_Return(self, node: ast.Return) -> None:
        self._note_return(node)
        self.generic_visit(node)

    def _note_return(self, node: ast.Return) -> None:
        """A function returning a NumPy float64 array (a factory, ``.astype(float)``, or a name bound to one)."""
        if not self.functions or node.value is None:
            return
        value = node.value
        if (isinstance(value, ast.Name) and value.id in self.np_f64_vars) or self._is_numpy_f64(value):
            name = self.functions[-1].name
            if name not in self.result.f64_returns:
                self.result.f64_returns.append(name)

    def visit_Assert(self, node: ast.Assert) -> None:
        for unit in _UNITS.get(ast.Assert, ()):  # API120 (mpsready.scan.code.units.asserts_cuda)
            unit(self, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        for unit in _UNITS.get(ast.AnnAssign, ()):  # API103 (device_literal_assign)
            unit(self, node)
        self.generic_visit(node)

    def _is_cpu_tensor(self, value: ast.AST) -> bool:
        """A tensor that stays on the CPU: torch.from_numpy(...), torch.tensor/as_tensor without a device, x.cpu(),
        or a cast of one (`w.double()` where w is such a tensor)."""
        if not isinstance(value, ast.Call):
            return False
        name = self.q(value.func) or ""
        if name == "torch.from_numpy" or (name in ("torch.tensor", "torch.as_tensor") and _kwarg(value, "device") is None):
            return True
        if isinstance(value.func, ast.Attribute):
            recv = value.func.value
            if value.func.attr == "cpu":
                return True
            if value.func.attr in ("double", "float", "long", "int") and isinstance(recv, ast.Name):
                return recv.id in self.cpu_vars
        return False

    def _is_numpy_f64(self, value: ast.AST, depth: int = 0) -> bool:
        """Whether ``value`` is a NumPy float64 array: a factory without a narrower dtype, ``astype(float)``, a
        name or attribute bound to one, or arithmetic, slicing and dtype-keeping NumPy functions over one
        (``np.cumprod(1.0 - betas)``, ``self.alphas[:-1]``, ``np.sqrt(self.alphas_cumprod)``)."""
        if depth > _F64_DEPTH:
            return False
        if isinstance(value, ast.Name):
            return value.id in self.np_f64_vars
        if isinstance(value, ast.Attribute):
            key = _dotted(value)
            return key is not None and key in self.np_f64_vars
        parts = _dtype_operands(value)
        if parts is not None:
            return any(self._is_numpy_f64(p, depth + 1) for p in parts)
        if not isinstance(value, ast.Call):
            return False
        name = self.q(value.func) or ""
        if name in _NUMPY_F64_FACTORIES:
            dtype = _kwarg(value, "dtype")
            return dtype is None or self._is_f64_dtype(dtype)
        if name in ("numpy.array", "numpy.asarray") or (isinstance(value.func, ast.Attribute) and value.func.attr == "astype"):
            dtype = _kwarg(value, "dtype") or (value.args[0] if value.func.__class__ is ast.Attribute
                                               and getattr(value.func, "attr", "") == "astype" and value.args else None)
            if dtype is not None:
                return self._is_f64_dtype(dtype)
        if name in _NUMPY_F64_KEEPERS:
            return _kwarg(value, "dtype") is None and any(self._is_numpy_f64(a, depth + 1) for a in value.args)
        if isinstance(value.func, ast.Attribute) and value.func.attr in _NUMPY_F64_METHODS and not name.startswith("torch."):
            return self._is_numpy_f64(value.func.value, depth + 1)
        return False

    def _sets_default_device(self) -> bool:
        """Whether the file calls ``torch.set_default_device`` / ``set_default_tensor_type`` anywhere (then a
        factory without ``device=`` may make its tensor on the GPU)."""
        if self._default_device is None:
            self._default_device = any(
                n.__class__ is ast.Call and isinstance(n.func, ast.Attribute)
                and n.func.attr in ("set_default_device", "set_default_tensor_type") for n in _walk(self.tree))
        return self._default_device

    def _cpu_f64_factory(self, node: ast.AST) -> bool:
        """``torch.linspace(..., dtype=torch.float64)`` without ``device=``: a float64 tensor made on the CPU."""
        if not isinstance(node, ast.Call) or (self.q(node.func) or "") not in _TORCH_FACTORIES:
            return False
        dtype = _kwarg(node, "dtype")
        return dtype is not None and (self.q(dtype) or "") in _F64_TORCH_NAMES and _kwarg(node, "device") is None \
            and not self._sets_default_device()

    def _is_torch_cpu_f64(self, value: ast.AST, depth: int = 0) -> bool:
        """A CPU float64 tensor: such a factory, a name bound to one, or arithmetic and dtype-keeping torch
        functions over one (``torch.cumprod(1.0 - betas, 0)``)."""
        if depth > _F64_DEPTH:
            return False
        if isinstance(value, ast.Name):
            return value.id in self.torch_f64_vars
        parts = _dtype_operands(value)
        if parts is not None:
            return any(self._is_torch_cpu_f64(p, depth + 1) for p in parts)
        if self._cpu_f64_factory(value):
            return True
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "double" \
                and isinstance(value.func.value, ast.Name) and (value.func.value.id in self.cpu_vars
                                                               or value.func.value.id in self.torch_f64_vars):
            return True  # t.double() of a CPU tensor
        if isinstance(value, ast.Call) and (self.q(value.func) or "") in _TORCH_F64_KEEPERS:
            return _kwarg(value, "dtype") is None and any(self._is_torch_cpu_f64(a, depth + 1) for a in value.args)
        return False

    def _casts(self, node: ast.Call) -> bool:
        """Whether a ``.to(...)`` call names a dtype (a cast, with or without a move)."""
        return any(self._is_dtype(a) for a in node.args) or any(k.arg == "dtype" for k in node.keywords)

    def _note_cpu_f64(self, node: ast.Call, name: str, attr: str | None) -> None:
        """Float64 made on the CPU is DTY101 info at its dtype; the move of such a tensor before a cast (``.to(dev)``,
        ``.cuda()``, a module buffer or parameter, which move with the module) is DTY101 at the move."""
        from mpsready.scan.rules import dtypes as T

        moves = attr == "cuda" or (attr == "to" and node.args + node.keywords and not self._casts(node))
        if moves:
            recv = node.func.value  # type: ignore[union-attr]
            while isinstance(recv, (ast.Call, ast.Subscript)):
                if isinstance(recv, ast.Call):
                    f = recv.func
                    if isinstance(f, ast.Attribute) and (f.attr in _CAST_METHODS or f.attr == "to" and self._casts(recv)):
                        break
                    self._moved_calls.add(id(recv))
                    recv = f.value if isinstance(f, ast.Attribute) else None
                else:
                    recv = recv.value
        sunk = None
        if moves and isinstance(node.func.value, ast.Name):  # type: ignore[union-attr]
            sunk = node.func.value  # type: ignore[union-attr]
        elif attr == "register_buffer" and len(node.args) >= 2 and isinstance(node.args[1], ast.Name):
            sunk = node.args[1]
        elif name in ("torch.nn.Parameter", "torch.nn.parameter.Parameter") and node.args and isinstance(node.args[0], ast.Name):
            sunk = node.args[0]
        if sunk is not None and sunk.id in self.torch_f64_vars:
            self.add(T.FLOAT64, node, f"{sunk.id} holds a float64 tensor made on the CPU (line "
                     f"{self.torch_f64_vars[sunk.id]}) and moves to a device before any cast: MPS has no float64")
        if id(node) not in self._moved_calls and self._cpu_f64_factory(node):
            self.cpu_f64_nodes[id(_kwarg(node, "dtype"))] = name

    def _is_f64_dtype(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in ("float64", "double", "f8")
        name = self.q(node) or ""
        return name in ("numpy.float64", "numpy.double", "float", "numpy.float_")

    # ---------------------------------------------------------------- functions and decorators
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.functions.append(node)
        for unit in _UNITS.get(node.__class__, ()):  # function units: decorators, parameter defaults, selections
            unit(self, node)
        dist = _is_distributed_name(node.name)
        self.dist_context += dist
        self._param_default = node.name
        self.visit(node.args)
        self._param_default = None
        for part in node.decorator_list:
            self.visit(part)
        self._visit_block(node.body)
        self.dist_context -= dist
        self.functions.pop()

    def _visit_block(self, body: list[ast.stmt]) -> None:
        """Visit statements; after `if not <distributed or CUDA check>: return`, the rest of the block is
        distributed-only (or CUDA-guarded) code."""
        entered_dist = entered_cuda = 0
        for stmt in body:
            self.visit(stmt)
            if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and all(
                    isinstance(s, (ast.Return, ast.Raise, ast.Continue, ast.Break)) for s in stmt.body) \
                    and isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not):
                if not entered_dist and self._is_distributed_test(stmt.test.operand):
                    entered_dist = 1
                    self.dist_context += 1
                elif not entered_cuda and self._is_cuda_test(stmt.test.operand):
                    entered_cuda = 1
                    self.cuda_guard += 1
            elif not entered_cuda and isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and all(
                    isinstance(s, (ast.Return, ast.Raise, ast.Continue, ast.Break)) for s in stmt.body) \
                    and isinstance(stmt.test, ast.BoolOp) and isinstance(stmt.test.op, ast.Or) and any(
                    isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not) and self._is_cuda_test(v.operand)
                    for v in stmt.test.values):
                # `if not torch.cuda.is_available() or not use_flash: return` exits on every Mac as well
                # (vit-pytorch's simple_flash_attn_vit.py)
                entered_cuda = 1
                self.cuda_guard += 1
        self.dist_context -= entered_dist
        self.cuda_guard -= entered_cuda

    visit_AsyncFunctionDef = visit_FunctionDef

    def _kernel(self, rule, node: ast.AST, message: str, lib: str) -> None:
        """Report a GPU kernel of ``lib`` (triton, numba, cupy, pycuda): degrades when the library is imported
        only under a try/except with a fallback in this file, else a blocker with no alternative."""
        guard = self.kernel_lib_guard.get(lib)
        evidence: dict[str, Any] = {"library": lib}
        severity = rule.severity
        if guard is not None:
            severity = Severity.DEGRADES
            evidence["fallback"] = f"line {guard}"
            message += f"; {lib} is imported under try/except with a fallback (line {guard})"
        else:
            evidence["no_alternative"] = True
        self.add(rule, node, message, severity=severity, evidence=evidence)

    # ---------------------------------------------------------------- names and attributes
    def visit_Attribute(self, node: ast.Attribute) -> None:
        root = node.value
        while root.__class__ is ast.Attribute:
            root = root.value
        if root.__class__ is ast.Name:
            if not self.aliases.is_imported(root.id):
                return  # `self.model.cuda`: a chain over a local name is never a torch/cupy name
            name = self.q(node)
            if not name.startswith(_QUALIFIED_HEADS):
                return  # nor can its inner parts (prefixes of the name), which are only Attributes and a Name
            if self._check_qualified(name, node):
                return  # the whole chain is reported; do not report its inner parts again
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        name = self.aliases.names.get(node.id)
        if name is not None and name != node.id and name.startswith(_QUALIFIED_HEADS):
            self._check_qualified(name, node)

    def _check_qualified(self, name: str, node: ast.AST) -> bool:
        """Report a qualified torch/cupy name; True when the whole chain was judged. Every name it reports
        starts with one of _QUALIFIED_HEADS."""
        for unit in _QUALIFIED:
            if unit(self, node, name):
                return True
        return False

    # ---------------------------------------------------------------- calls
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = self.q(func) or ""
        attr = func.attr if isinstance(func, ast.Attribute) else None
        for unit in _CALL_UNITS:
            unit(self, node, name, attr)
        if attr in ("to", "cuda", "register_buffer") or name in _TORCH_FACTORIES or name.endswith("Parameter"):
            self._note_cpu_f64(node, name, attr)
        # a project call passing a NumPy float64 array, for the model to join with the callee's parameters; a
        # tensor made from an array and placed on a device by this call itself is the numpy_float64 unit's
        placed = name in _TENSOR_FROM_ARRAY and node.args and _kwarg(node, "dtype") is None \
            and _kwarg(node, "device") is not None
        if not placed and (node.args and self.np_f64_vars or any(isinstance(a, ast.Call) for a in node.args)):
            callee = _project_callee(node)
            if callee is not None and callee not in ("to", "astype", "float", "append", "array", "asarray"):
                for i, a in enumerate(node.args):
                    if (isinstance(a, ast.Name) and a.id in self.np_f64_vars) or self._is_numpy_f64(a):
                        self.result.f64_calls.append([callee, i, node.lineno])
        self.generic_visit(node)

    def _is_module(self, node: ast.AST) -> bool:
        name = self.q(node) or ""
        head = name.split(".")[0]
        return isinstance(node, (ast.Name, ast.Attribute)) and self.aliases.is_imported(head) and head in (
            "torch", "numba", "cupy", "pycuda", "cuda")

    def _flagged_name(self, arg: ast.AST) -> bool:
        """A device-named variable was already reported where it was assigned."""
        return isinstance(arg, ast.Name) and _device_like_name(arg.id)

    def _is_dtype(self, node: ast.AST) -> bool:
        name = self.q(node) or ""
        return name.startswith("torch.") and name.split(".")[-1] in (
            "float32", "float", "float16", "half", "bfloat16", "int64", "long", "int32", "int", "bool", "uint8",
            "float64", "double", "int8", "int16", "complex64")


def _guarded_build_line(scope: ast.AST) -> int | None:
    """Line of a try/except in ``scope`` (a function or module) that wraps a call and falls back on failure:
    the shape of `try: plugin = build(sources) except Exception: warn(...); use the reference`."""
    for n in _walk(scope):
        if isinstance(n, ast.Try) and any(isinstance(c, ast.Call) for st in n.body for c in _walk(st)):
            for h in n.handlers:
                if _is_fallback_handler(h):
                    return h.lineno
    return None


def _is_fallback_handler(handler: ast.ExceptHandler) -> bool:
    """An except clause that catches import failures and does something other than re-raise."""
    types: list[ast.AST] = []
    if handler.type is None:
        types = []
    elif isinstance(handler.type, ast.Tuple):
        types = list(handler.type.elts)
    else:
        types = [handler.type]
    names = {t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else "" for t in types}
    if handler.type is not None and not (names & _FALLBACK_EXCEPTIONS):
        return False
    return not all(isinstance(s, ast.Raise) for s in handler.body)


_DTYPE_WORDS = {"float16", "float32", "float64", "double", "half", "float", "bfloat16", "int8", "int16", "int32",
                "int64", "long", "uint8", "bool", "complex64", "complex128", "cfloat", "cdouble"}


_DTYPE_BARE = _DTYPE_WORDS - {"float", "bool", "long", "double", "half"}  # bare names that are also Python's


def _mps_branch(test: ast.AST) -> str | None:
    """Which branch of ``if test:`` a tensor or device on MPS never takes: ``"body"`` for ``x.device.type !=
    "mps"``, ``"mps" not in str(d)``, ``not x.is_mps``; ``"orelse"`` for ``== "mps"``, ``"mps" in``, ``x.is_mps``;
    else None."""
    cls = test.__class__
    if cls is ast.UnaryOp and test.op.__class__ is ast.Not:
        inner = _mps_branch(test.operand)
        return {"body": "orelse", "orelse": "body"}.get(inner) if inner else None
    if cls is ast.Attribute:
        return "orelse" if test.attr == "is_mps" else None
    if cls is not ast.Compare or len(test.ops) != 1:
        return None
    sides = (test.left, test.comparators[0])
    if not any(s.__class__ is ast.Constant and s.value == "mps" for s in sides):
        return None
    op = test.ops[0].__class__
    if op in (ast.NotEq, ast.IsNot, ast.NotIn):
        return "body"
    if op in (ast.Eq, ast.Is, ast.In):
        return "orelse"
    return None


_DTYPE_NAMES = {"torch.float64", "torch.double", "torch.complex128", "torch.cdouble", "torch.complex64", "torch.cfloat",
                "torch.complex32", "torch.chalf", "torch.bfloat16"}
_DISTRIBUTED_WORDS = ("ddp", "distributed", "all_gather", "all_reduce", "allreduce", "reduce_dict", "world_size",
                      "broadcast", "barrier", "local_rank", "multi_gpu", "multigpu", "dist_init", "dist_avail",
                      "is_dist", "between_processes")


def _is_distributed_name(name: str) -> bool:
    low = name.lower()
    return any(w in low for w in _DISTRIBUTED_WORDS)


def _dotted(node: ast.AST) -> str | None:
    """``args.dist_backend`` for an Attribute chain over a Name (as written, no alias resolution)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _kwarg(node: ast.Call, name: str) -> ast.AST | None:
    for kw in node.keywords:
        if kw.arg == name:
            return kw.value
    return None


def _device_like_name(name: str) -> bool:
    low = name.lower()
    return "device" in low or low in ("dev", "map_location")


def _names_cuda(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return is_cuda_literal(node.value)
    if _cuda_text(node):
        return True
    if isinstance(node, ast.Call) and node.args:
        return _names_cuda(node.args[0])
    return False


def _cuda_text(node: ast.AST) -> str | None:
    """A device string built at run time that names CUDA: ``f"cuda:{rank}"`` or ``"cuda:{}".format(i)``,
    shown as written (``cuda:{rank}``); ``None`` for anything else."""
    if isinstance(node, ast.JoinedStr) and node.values:
        head = node.values[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str) and (
                head.value == "cuda:" or (head.value == "cuda" and len(node.values) == 1)):
            return "cuda:" + "".join("{" + (_dotted(v.value) or "...") + "}" for v in node.values[1:]
                                     if isinstance(v, ast.FormattedValue))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
            and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str) \
            and node.func.value.value.startswith("cuda:{"):
        return node.func.value.value
    return None


def _is_cpu_test(test: ast.AST) -> bool:
    """``x.device.type == "cpu"``, ``str(x.device) == "cpu"`` or ``x.device == torch.device("cpu")``."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    left, right = test.left, test.comparators[0]
    if not _names_cpu(right):
        left, right = right, left
        if not _names_cpu(right):
            return False
    if isinstance(left, ast.Attribute) and left.attr == "type" and isinstance(left.value, ast.Attribute) \
            and left.value.attr == "device":
        return True
    if isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "str" and left.args \
            and isinstance(left.args[0], ast.Attribute) and left.args[0].attr == "device":
        return True
    return isinstance(left, ast.Attribute) and left.attr == "device"


def _dtype_operands(value: ast.AST) -> list[ast.AST] | None:
    """The operands whose dtype an expression keeps (``x[i]`` -> x, ``a - b`` -> a and b, ``-x`` -> x, by NumPy's
    and PyTorch's type promotion for float64 with Python numbers), or ``None`` for any other expression."""
    if isinstance(value, ast.Subscript):
        return [value.value]
    if isinstance(value, ast.BinOp):
        return [value.left, value.right]
    if isinstance(value, ast.UnaryOp):
        return [value.operand]
    return None


def _is_cuda_type_test(test: ast.AST) -> bool | None:
    """``x.device.type == "cuda"`` / ``x.is_cuda`` (True: the ``if`` body is the CUDA branch) or
    ``x.device.type != "cuda"`` / ``not x.is_cuda`` (False: the body is the portable branch); else ``None``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _is_cuda_type_test(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        # `torch.cuda.is_available() and value.is_cuda` (GroundingDINO's deformable attention): the CUDA branch
        # when one part is a CUDA type test and no part is the portable one
        kinds = [_is_cuda_type_test(v) for v in test.values]
        return True if True in kinds and False not in kinds else None
    if isinstance(test, ast.Attribute) and test.attr == "is_cuda":
        return True
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
        return None
    left, right = test.left, test.comparators[0]
    if not (isinstance(right, ast.Constant) and right.value == "cuda"):
        left, right = right, left
    if not (isinstance(right, ast.Constant) and right.value == "cuda" and isinstance(left, ast.Attribute)
            and left.attr == "type" and isinstance(left.value, ast.Attribute) and left.value.attr == "device"):
        return None
    return isinstance(test.ops[0], ast.Eq)


def _target_key(stmt: ast.Assign) -> str | None:
    if len(stmt.targets) != 1:
        return None
    return _dotted(stmt.targets[0])


def _project_callee(value: ast.AST) -> str | None:
    """Short name of the function a call expression calls when it may be the project's own (``foo(...)``,
    ``self.transform.apply_coords(...)``); ``None`` for anything else."""
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        root = func.value
        while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
            root = root.value if not isinstance(root, ast.Call) else root.func
        if isinstance(root, ast.Name) and root.id in ("np", "numpy", "torch", "F", "nn"):
            return None
        return func.attr
    return None


def _names_cpu(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value == "cpu"
    if isinstance(node, ast.Call) and node.args:
        return _names_cpu(node.args[0])
    return False


# The rule units import helpers from this module, so they are loaded once it is complete.
from mpsready.scan.code import units as _units  # noqa: E402

_UNITS = _units.load()
_CALL_UNITS = tuple(_UNITS.get(ast.Call, ()))
_QUALIFIED = tuple(_UNITS.get(_units.QualifiedName, ()))

"""One Python source in, raw findings out: everything the scan learns from a syntax tree.

:func:`analyze_source` decodes and parses the source once, runs the visitor
(:class:`mpsready.scan.code.visitor.Visitor`, which dispatches to the rule units over the per-file context) and the
per-file summaries (:mod:`mpsready.scan.code.summaries`), and returns a :class:`~mpsready.scan.code.result.CodeResult`;
:func:`analyze_source_tree` also returns the parsed tree, for the project-model passes that read it again
(:class:`mpsready.scan.model.reread.SourceTrees`). Findings come only from the ``ast`` tree (and ``tokenize`` for
``# mpsready: ignore[...]`` comments), never from regular expressions over the source.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
import warnings
from typing import Any

from mpsready.findings import Severity
from mpsready.scan.code.names import build_alias_map
from mpsready.scan.code.result import CodeResult, raw_finding
from mpsready.scan.code.summaries import guard_by_callers, live_lines, model_summaries
from mpsready.scan.code.suppress import suppressions
from mpsready.scan.code.triggers import find_next_to, line_trigger_words, may_fire
from mpsready.scan.code.visitor import Visitor
from mpsready.scan.rules import inputs as I

# Bump when the analysis changes so cached results are recomputed.
ANALYZER_VERSION = 35

# Skip the analysis of sources without a trigger word (see triggers.py); tests turn it off to compare.
PREFILTER = True


def analyze_source(source: str | bytes, *, prefilter: bool | None = None) -> CodeResult:
    """Analyse one Python source: :func:`analyze_source_tree` without the tree."""
    return analyze_source_tree(source, prefilter=prefilter)[0]


def analyze_source_tree(source: str | bytes, *,
                        prefilter: bool | None = None) -> tuple[CodeResult, ast.Module | None]:
    """Analyse one Python source, total: (:func:`_analyze`'s result, the parsed tree or ``None`` when the source
    does not decode or parse). A tree Python parses but nests deeper than the analysis can walk (a 1,000-branch
    ``elif`` chain is 1,000 nested ``If`` nodes) is one INP105 finding, never an error of the whole scan."""
    try:
        return _analyze(source, prefilter)
    except RecursionError:
        return CodeResult([raw_finding(I.SYNTAX_ERROR, 1, 0, "cannot analyse: the code nests deeper than the "
                                       "analysis can walk (RecursionError); the file's code was not checked")],
                          parsed=False), None


def _analyze(source: str | bytes, prefilter: bool | None) -> tuple[CodeResult, ast.Module | None]:
    """Analyse one Python source (text, or bytes decoded per PEP 263).

    Returns a :class:`CodeResult` and the tree; a source that does not parse yields one INP105 (or INP106 for
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
            return CodeResult([raw_finding(I.NOT_TEXT, 1, 0, f"cannot decode Python source: {exc}")],
                              parsed=False), None
    else:
        text = source
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences etc. in old code
            tree = ast.parse(text)
    except SyntaxError as exc:
        return CodeResult([_syntax_finding(exc, text)], parsed=False), None
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        # MemoryError: the parser's stack ran out (3.13 words it "Parser stack overflowed", earlier releases say nothing)
        deep = "nested too deeply for Python's parser"
        why = deep if isinstance(exc, MemoryError) else (str(exc) or deep)
        return CodeResult([raw_finding(I.SYNTAX_ERROR, 1, 0, f"cannot parse: {why} ({type(exc).__name__})")],
                          parsed=False), None
    live = None
    if PREFILTER if prefilter is None else prefilter:
        # DEP107 (an import of a knowledge-base package) is judged on the import statements themselves,
        # which every source gets; the other rules need a trigger word somewhere in the text
        if not may_fire(text, line_trigger_words()):
            visitor = Visitor(build_alias_map(tree), tree)
            visitor.text = text  # the Mac-facts evaluation of nested imports reads it (macenv: no walk without need)
            visitor.collect_imports(tree.body)
            return _finish(visitor, tree, text), tree
        if "\r" not in text:  # ast counts a lone \r as a line break too; trigger_lines splits at \n only
            live = live_lines(tree, text)
    visitor = Visitor(build_alias_map(tree), tree, cu_literals=_names_cu_file(text), live_lines=live)
    visitor.text = text
    if "set_default_" not in text:
        visitor.default_device = False  # no set_default_device / set_default_tensor_type call: no walk needed
    try:
        visitor.visit(tree)
    except RecursionError:
        visitor.result.findings.append(raw_finding(I.SYNTAX_ERROR, 1, 0, "nesting too deep to analyse"))
    return _finish(visitor, tree, text), tree


def _finish(visitor: Visitor, tree: ast.Module, text: str) -> CodeResult:
    """The visitor's result with the suppression comments and the per-file summaries added."""
    result = visitor.result
    result.suppress = suppressions(text) if "mpsready:" in text else {}
    result.imports = guard_by_callers(tree, text, result.imports)
    if "import_module" in text:  # a package whose modules are loaded by name (issue 32, round 5)
        from mpsready.scan.code.dynamic_imports import dynamic_imports
        result.imports += dynamic_imports(tree, text)
    top = {s.lineno for s in tree.body if s.__class__ in (ast.Import, ast.ImportFrom)}
    nested = sorted({imp.line for imp in result.imports if imp.line not in top})
    if nested:  # an import inside a block: maybe one a Mac never runs
        from mpsready.scan.code.mac_imports import skipped_imports
        checked: dict[str, list] = {}
        never: dict[str, dict] = {}
        try:
            result.skipped_imports = skipped_imports(visitor, tree, checked, nested, never)
        except RecursionError:  # blocks or tests nested past Python's stack: every import counts (the default)
            result.skipped_imports, checked, never = {}, {}, {}
        if checked:
            optional_imports(result, checked)
        if never:
            never_imported(result, never)
    model_summaries(tree, text, result)
    _release(visitor)
    return result


def _release(visitor: Visitor) -> None:
    """Drop what the file's analysis holds once its result is taken. The visitor and its Mac-facts evaluation point
    at each other (``MacEval(visitor)``), and recursive closures of the analysis (a nested function that calls
    itself is a cycle) keep both: with the collector paused for the scan (:func:`mpsready.scan.engine.gc_paused`)
    such a cycle kept the file's whole tree and tables alive to the end of the scan, where one collection of some
    6.5 million objects cost ~2.4 s of the torch package's 14.8 s (CPU). Emptied, what the cycle reaches is small,
    and reference counting frees the tree with its file."""
    mac = getattr(visitor, "mac", None)
    if mac is not None:
        vars(mac).clear()
    vars(visitor).clear()


def optional_imports(result: CodeResult, checked: dict[str, list]) -> None:
    """DEP107 at an import that runs only when a check naming the package passes (``if
    is_package_available("flash_attn"):``, issue 32) is optional: it degrades at most, with ``evidence.optional``.
    Decided after the visit, from the statement walk, so the prefilter cannot change it."""
    for f in result.findings:
        where = checked.get(str(f["line"]))
        if f["code"] != "DEP107" or where is None or "fallback" in f["evidence"]:
            continue
        f["evidence"] = {**f["evidence"], "optional": f"imported only when {where[0]} (line {where[1]})"}
        f["evidence"].pop("no_alternative", None)
        if f["severity"] == Severity.BLOCKER.value:
            f["severity"] = Severity.DEGRADES.value
        f["message"] += f"; imported only when {where[0]} (line {where[1]}), which names the package itself"


def never_imported(result: CodeResult, never: dict[str, dict]) -> None:
    """DEP107 at an import in a branch the Mac's facts alone decide against (``if is_flash_attn_2_available():``,
    ``if torch.cuda.is_available():``) never runs on a Mac: info with ``evidence.mac_never``, as the visitor does for
    the findings inside such a branch (issue 32, round 4: a source without trigger words gets no branch walk)."""
    for f in result.findings:
        where = never.get(str(f["line"]))
        if f["code"] != "DEP107" or where is None or f["severity"] == Severity.INFO.value \
                or "mac_never" in f["evidence"]:
            continue
        f["evidence"] = {**f["evidence"], "mac_never": where}
        f["severity"] = Severity.INFO.value
        f["message"] += f" (a Mac never runs this: {where['test']} is {where['value']} there)"


def _syntax_finding(exc: SyntaxError, text: str) -> dict[str, Any]:
    line = exc.lineno or 1
    msg = exc.msg or "invalid syntax"
    py2_markers = ("Missing parentheses in call to 'print'", "Missing parentheses in call to 'exec'",
                   "multiple exception types must be parenthesized")
    is_py2 = any(m in msg for m in py2_markers) or _looks_python2(text)
    ver = f"{sys.version_info.major}.{sys.version_info.minor}"
    if not is_py2 and _newer_grammar(text):
        return raw_finding(I.NEWER_PYTHON, line, (exc.offset or 1) - 1,
                           f"written for a newer Python than {ver} ({msg} at line {line} under {ver}'s parser; "
                           f"libcst's parser reads the file); not analysed: scan with the Python the project uses")
    rule = I.PYTHON2 if is_py2 else I.SYNTAX_ERROR
    what = "Python 2 source" if is_py2 else "syntax error"
    return raw_finding(rule, line, (exc.offset or 1) - 1, f"{what}: {msg} (line {line}, parsed as Python {ver}); not analysed")


_NEWER_GRAMMAR_MAX_CHARS = 2_000_000
_NEWER_GRAMMAR_MAX_DEPTH = 100  # brackets plus indentation; real code stays far below


def _nesting(text: str) -> int:
    """The deepest nesting of brackets and indented blocks in ``text``, read with ``tokenize`` (a huge number
    when the text does not tokenize, so the caller gives up)."""
    depth = indent = deepest = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
            elif tok.type == tokenize.INDENT:
                indent += 1
            elif tok.type == tokenize.DEDENT:
                indent -= 1
            elif tok.type == tokenize.NAME and tok.string == "lambda":
                depth += 1  # a chain of lambdas deepens the tree without a bracket (never closed: an upper bound)
            deepest = max(deepest, depth + indent)
    except (tokenize.TokenError, SyntaxError, IndentationError, RecursionError, MemoryError):
        return 1 << 30
    return deepest


def _newer_grammar(text: str) -> bool:
    """True when libcst's parser, which knows the grammars of Python 3.0 to 3.13 whatever interpreter runs it,
    parses ``text`` that this interpreter's ``ast`` refused: the file is newer Python, not broken Python.
    Reached only for a source that failed to parse, so libcst is imported on that path alone."""
    if sys.version_info >= (3, 14):  # nothing newer for libcst to know than the interpreter itself
        return False
    if len(text) > _NEWER_GRAMMAR_MAX_CHARS or _nesting(text) > _NEWER_GRAMMAR_MAX_DEPTH:
        return False  # libcst's native parser recurses per level: deep input would overflow its stack
    try:
        import libcst
    except ImportError:  # pragma: no cover - libcst is a dependency of the package
        return False
    try:
        libcst.parse_module(text)
    except Exception:  # noqa: BLE001 - any refusal of libcst's parser (ParserSyntaxError, RecursionError) means no
        return False
    return True


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


def _names_cu_file(text: str) -> bool:
    """Whether a string literal may end in .cu/.cuh (the closing quote follows the suffix): else the
    visitor skips every Constant node, the most common node after Name."""
    return find_next_to(text, ".cu", after="\"'h")  # '.cu"', ".cu'" or ".cuh", in one pass

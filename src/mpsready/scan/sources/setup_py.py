"""setup.py read with ``ast``, never executed: install_requires and extras_require.

Values may be list literals, module-level names bound to lists, list concatenations, or expressions
that read a requirements file (``open('requirements.txt').read().splitlines()``, a helper called
with the file name, a helper whose body names the file): the named ``.txt`` file is then read as a
requirements file. Anything else is reported as DEP108 (dynamic, not checked).
"""

from __future__ import annotations

import ast
import io
import tokenize
import warnings
from pathlib import PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from mpsready.scan.rules import deps as D
from mpsready.scan.rules import inputs as I
from mpsready.scan.sources.interface import line_guard
from mpsready.scan.sources.interface import DependencySource, ProjectFiles, RawFinding, SourceError, SourceResult
from mpsready.scan.sources.pep508 import add_requirement
from mpsready.scan.sources.requirements import RequirementsSource


class SetupPySource(DependencySource):
    name = "setup.py"

    def matches(self, relpath: str) -> bool:
        return PurePosixPath(relpath).name == "setup.py"

    def collect(self, relpath: str, text: str, files: ProjectFiles, result: SourceResult | None = None) -> SourceResult:
        result = SourceResult() if result is None else result
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return result  # the Python analysis reports it (INP105/INP106)
        except (RecursionError, MemoryError):
            # CPython's parser stack runs out on deep nesting (195 nested `[lambda:` is a MemoryError) and its
            # syntax-tree builder recurses: read the other top-level statements, so setup() is not lost
            tree = _parse_statements(text, relpath, result)
        reader = _Reader(tree, relpath, files, result)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _is_setup_call(node.func):
                for kw in node.keywords:
                    if kw.arg in ("install_requires", "requires"):
                        reader.requirements(kw.value, optional=False, group=None)
                    elif kw.arg == "extras_require":
                        reader.extras(kw.value)
        return result


def _is_setup_call(func: ast.AST) -> bool:
    return (isinstance(func, ast.Name) and func.id == "setup") or (isinstance(func, ast.Attribute) and func.attr == "setup")


class _Reader:
    def __init__(self, tree: ast.Module, relpath: str, files: ProjectFiles, result: SourceResult) -> None:
        self.relpath, self.files, self.result = relpath, files, result
        self.assigns: dict[str, ast.AST] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        self.table: dict[str, str] | None = None  # the module's table of pinned requirements, by name (_from_table)
        for node in tree.body:
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.assigns[t.id] = node.value
                    elif isinstance(t, ast.Tuple) and isinstance(node.value, ast.Call):
                        # `reqs, extra_indices = get_requirements()`: the call reads the file
                        if t.elts and isinstance(t.elts[0], ast.Name):
                            self.assigns[t.elts[0].id] = node.value
            elif isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node

    def requirements(self, node: ast.AST, *, optional: bool, group: str | None, depth: int = 0) -> None:
        if depth > 5:
            return self._dynamic(node)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            for elt in node.elts:
                with line_guard(self.result, self.relpath, getattr(elt, 'lineno', None)):
                    if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                        add_requirement(self.result, elt.value, self.relpath, elt.lineno, optional=optional, group=group)
                    else:
                        self.requirements(elt, optional=optional, group=group, depth=depth + 1)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for line in node.value.splitlines():
                add_requirement(self.result, line.split("#")[0], self.relpath, node.lineno, optional=optional, group=group)
        elif isinstance(node, ast.Name) and node.id in self.assigns:
            self.requirements(self.assigns[node.id], optional=optional, group=group, depth=depth + 1)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            self.requirements(node.left, optional=optional, group=group, depth=depth + 1)
            self.requirements(node.right, optional=optional, group=group, depth=depth + 1)
        elif (found := self._from_table(node)) is not None:
            for text in found:
                add_requirement(self.result, text, self.relpath, getattr(node, "lineno", None), optional=optional,
                                group=group)
        elif not self._from_files(node, optional, group):
            self._dynamic(node)

    def _from_table(self, node: ast.AST) -> list[str] | None:
        """The requirement strings of a lookup into the module's table of pinned requirements (issue 32, round 6): a
        module-level list of requirement strings (``_deps = ["torch==2.6.0", "trl[vllm]==0.18.0", ...]``) indexed by
        project name, ``deps["trl"]``, or a helper called with names, ``deps_list("torch", "trl")``; every name must be
        one requirement's name in the table (compared as PEP 503 normalises them), else None."""
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            keys = [node.slice.value]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions \
                and node.args and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
            keys = [a.value for a in node.args]  # type: ignore[attr-defined]
        else:
            return None
        if self.table is None:
            self.table = {}
            for value in self.assigns.values():
                texts = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)] \
                    if isinstance(value, ast.List) else []
                if texts and len(texts) == len(value.elts):  # type: ignore[attr-defined]
                    for text in texts:
                        try:
                            self.table.setdefault(canonicalize_name(Requirement(text).name), text)
                        except (InvalidRequirement, ValueError):
                            continue
        found = [self.table.get(canonicalize_name(k)) for k in keys]
        return [t for t in found if t is not None] if all(found) else None

    def extras(self, node: ast.AST) -> None:
        if isinstance(node, ast.Name) and node.id in self.assigns:
            node = self.assigns[node.id]
        if not isinstance(node, ast.Dict):
            return self._dynamic(node)
        for key, value in zip(node.keys, node.values):
            name = str(key.value) if isinstance(key, ast.Constant) else "?"  # as an f-string shows it
            self.requirements(value, optional=True, group=f"extra:{name}")

    def _from_files(self, node: ast.AST, optional: bool, group: str | None) -> bool:
        """Read requirement files named in the expression or in the body of a helper it calls."""
        def file_names(part: ast.AST) -> list[str]:
            return [c.value for c in ast.walk(part)
                    if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.endswith((".txt", ".in"))]

        names = file_names(node)  # named in the expression itself (a helper called with the file name)
        if not names:  # else named inside the helpers it calls (their bodies or default arguments)
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in self.functions:
                    names += file_names(self.functions[sub.func.id])
        read = False
        for name in dict.fromkeys(names):
            target = ProjectFiles.join(self.relpath, name)
            try:
                text = self.files.read_text(target)
            except SourceError as exc:
                self.result.findings.append(RawFinding(I.MALFORMED_CONFIG, self.relpath, getattr(node, "lineno", None),
                                                       f"setup.py reads {name!r}, which was not read: {exc}"))
                continue
            listed = RequirementsSource().collect(target, text, self.files)
            for dep in listed.dependencies:
                self.result.dependencies.append(type(dep)(**{**dep.__dict__, "optional": optional or dep.optional,
                                                             "group": group}))
            self.result.findings.extend(listed.findings)
            read = True
        return read

    def _dynamic(self, node: ast.AST) -> None:
        self.result.findings.append(RawFinding(D.UNKNOWN_DECLARATION, self.relpath, getattr(node, "lineno", None),
                                               "dependencies computed at run time; not read (setup.py is never executed)",
                                               evidence={"expression": _shown(node)}))


def _shown(node: ast.AST) -> str:
    """The expression's source (at most 120 characters); ``ast.unparse`` recurses once per level and gives up on
    an expression nested a few hundred deep."""
    try:
        return ast.unparse(node)[:120]
    except (RecursionError, MemoryError, ValueError):
        return f"<{type(node).__name__} nested too deeply to show>"


def _parse_statements(text: str, relpath: str, result: SourceResult) -> ast.Module:
    """The top-level statements of ``text`` that parse on their own, as one module (line numbers kept);
    each statement that does not is an INP112 finding. Statements are delimited with :mod:`tokenize` (Python's
    own tokenizer, which does not nest): a new one starts at a token in column 0 outside brackets."""
    starts = [1]
    depth, after_newline = 0, True
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                continue
            if tok.type == tokenize.NEWLINE:
                after_newline = depth == 0
                continue
            if after_newline and depth == 0 and tok.start[1] == 0 and tok.start[0] > starts[-1]:
                starts.append(tok.start[0])
            after_newline = False
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
    except (tokenize.TokenError, SyntaxError):
        pass  # an unclosed bracket at the end: the statements before it are still delimited
    lines = text.splitlines(keepends=True)
    body: list[ast.stmt] = []
    for first, nxt in zip(starts, starts[1:] + [len(lines) + 1]):
        chunk = "".join(lines[first - 1:nxt - 1])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                part = ast.parse(chunk)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            why = "nested too deeply for Python's parser" if isinstance(exc, (RecursionError, MemoryError)) else "does not parse alone"
            result.findings.append(RawFinding(I.TOO_DEEP, relpath, first,
                                              f"setup.py {_span(first, nxt - 1)}: {why}; not read (the other "
                                              "statements were)"))
            continue
        ast.increment_lineno(part, first - 1)
        body += part.body
    return ast.Module(body=body, type_ignores=[])


def _span(first: int, last: int) -> str:
    return f"line {first}" if first >= last else f"lines {first}-{last}"

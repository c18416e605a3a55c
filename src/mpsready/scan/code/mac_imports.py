"""Imports a Mac running the project's defaults never executes (issue 32): the statement walk after a file's visit
that fills ``CodeResult.skipped_imports`` and the availability-checked imports (``checked``)."""

from __future__ import annotations

import ast
from bisect import bisect_left
from typing import Any

from mpsready.scan.code.macfacts import MacEval


def skipped_imports(ctx: Any, tree: ast.Module, checked: dict[str, list],
                    lines: list[int] | None = None, never: dict[str, dict] | None = None) -> dict[str, str]:
    """Import line -> why a Mac running the project's defaults never executes it: an import in a branch whose test
    the Mac's facts or an option's default decide against (``if args.fp8:`` with ``--fp8`` off by default, ``if
    torch.cuda.is_available():``, the rest of a function after ``if not torch.cuda.is_available(): return``).
    The main path does not follow such imports (:func:`mpsready.scan.model.graph._reach`). ``ctx`` is the file's
    context after its visit (its aliases complete). An import under an ``if`` whose test names the imported
    package as a string (an availability check) goes to ``checked`` (line -> [test, test line]). ``lines`` are
    the lines of the file's nested imports: only the statements holding one are entered. ``never`` (when given)
    gets, for each import the Mac's facts alone decide against, the test as ``mac_never`` evidence states it.

    Long because the walk keeps the enclosing branches, functions and classes itself (as the visitor does) in
    three small closures over that state; split apart they would pass five values each call."""
    mac = ctx.mac if isinstance(getattr(ctx, "mac", None), MacEval) else MacEval(ctx)  # one environment per file
    ctx.mac = mac
    if lines is None:
        lines = sorted(imp.line for imp in ctx.result.imports)
    out: dict[str, str] = {}
    branches: list[tuple[ast.expr, bool, Any, Any]] = []
    strings: dict[int, set] = {}  # id(test) -> the constants it holds, walked once per test

    def constants(test: ast.expr) -> set:
        got = strings.get(id(test))
        if got is None:
            got = strings[id(test)] = {n.value for n in ast.walk(test) if n.__class__ is ast.Constant  # type: ignore[attr-defined]
                                       and n.value.__class__ is str}  # type: ignore[attr-defined]
        return got

    def decide(line: int, stmt: ast.Import | ast.ImportFrom) -> None:
        names = {stmt.module.split(".")[0]} if isinstance(stmt, ast.ImportFrom) and stmt.module else {
            a.name.split(".")[0] for a in stmt.names}
        for test, want, _fn, _cls in reversed(branches):
            if want and (not names.isdisjoint(constants(test)) or availability_named(test, names)):
                # `if is_package_available("flash_attn"): from flash_attn import ...`: runs only where installed
                checked[str(line)] = [ast.unparse(test)[:80], test.lineno]
                break
        for test, want, fn, cls in branches:
            truth = mac.truth(test, fn, cls)
            if truth is not None and truth != want:
                facts = "; ".join(mac.facts)
                if never is not None and not mac.used_default:
                    # decided by the Mac's facts alone, not by an option's default: the import never runs there
                    never[str(line)] = {"test": ast.unparse(test)[:120], "line": test.lineno, "value": str(truth),
                                        "facts": list(mac.facts)}
                out[str(line)] = f"{ast.unparse(test)[:80]} is {truth} (line {test.lineno})" + (
                    f": {facts}" if facts else "")
                return

    def holds(stmt: ast.stmt) -> bool:
        """Whether an import line lies within the statement (only those blocks are entered)."""
        i = bisect_left(lines, stmt.lineno)
        return i < len(lines) and lines[i] <= (stmt.end_lineno or stmt.lineno)

    def block(body: list[ast.stmt], fn: Any, cls: Any) -> None:
        exits = 0
        for stmt in body:
            kind = stmt.__class__
            if kind is not ast.If and kind not in (ast.Import, ast.ImportFrom) and not holds(stmt):
                continue
            if kind in (ast.Import, ast.ImportFrom):
                if branches:
                    decide(stmt.lineno, stmt)  # type: ignore[arg-type]
            elif kind is ast.If and not holds(stmt):  # only its early exit matters
                body, orelse = getattr(stmt, "body"), getattr(stmt, "orelse")
                if fn is not None and not orelse and body and body[-1].__class__ in (ast.Return, ast.Raise):
                    branches.append((stmt.test, False, fn, cls))  # type: ignore[attr-defined]
                    exits += 1
            elif kind is ast.If:
                branches.append((stmt.test, True, fn, cls))  # type: ignore[attr-defined]
                block(stmt.body, fn, cls)  # type: ignore[attr-defined]
                branches[-1] = (stmt.test, False, fn, cls)  # type: ignore[attr-defined]
                block(stmt.orelse, fn, cls)  # type: ignore[attr-defined]
                branches.pop()
                body, orelse = getattr(stmt, "body"), getattr(stmt, "orelse")
                if fn is not None and not orelse and body and body[-1].__class__ in (ast.Return, ast.Raise):
                    branches.append((stmt.test, False, fn, cls))  # type: ignore[attr-defined]
                    exits += 1
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef):
                saved = branches[:]
                branches.clear()  # a function's body runs when it is called, not where it is defined
                block(stmt.body, stmt, cls)  # type: ignore[attr-defined]
                branches[:] = saved
            elif kind is ast.ClassDef:
                saved = branches[:]
                branches.clear()
                block(stmt.body, None, stmt)  # type: ignore[attr-defined]
                branches[:] = saved
            else:
                for part in ("body", "orelse", "finalbody"):
                    sub = getattr(stmt, part, None)
                    if sub.__class__ is list:
                        block(sub, fn, cls)
                for h in getattr(stmt, "handlers", ()):
                    block(h.body, fn, cls)
                for case in getattr(stmt, "cases", ()):
                    block(case.body, fn, cls)
        if exits:
            del branches[len(branches) - exits:]

    block(tree.body, None, None)
    return out


# words that make a name an availability test, not an option: `is_causal_conv1d_available()`, `HAS_FLASH_ATTN`,
# `model_management.xformers_enabled()` (a call: the helper decides at run time from what is installed)
_AVAILABLE_WORDS = ("avail", "installed", "has", "have", "supported")  # a word starting so
_CALL_WORDS = (*_AVAILABLE_WORDS, "enabled")


def availability_named(test: ast.expr, packages: set[str]) -> bool:
    """Whether ``test`` asks if one of ``packages`` (top-level import names) is available by a name that holds the
    package's name (underscores and case ignored): a called helper with an availability word
    (``is_causal_conv1d_available()``, ``xformers_enabled()``) or a flag named so (``HAS_FLASH_ATTN``,
    ``FLASH_ATTN_AVAILABLE``). Such an import runs only where the package is installed, as with the package named as
    a string (issue 32, round 11). An option that merely names the package (``args.use_xformers``,
    ``cfg.flash_attn``) is no such test: on by default, the import runs and fails on a Mac."""
    keys = {p.replace("_", "").lower() for p in packages if len(p) >= 4}
    called = {id(n.func) for n in ast.walk(test) if isinstance(n, ast.Call)}
    for n in ast.walk(test):
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else None
        if name is None:
            continue
        tokens = name.lower().split("_")  # whole words: `flash` holds `has`, `HAS_FLASH` is the flag
        words = _CALL_WORDS if id(n) in called else _AVAILABLE_WORDS
        if any(k in "".join(tokens) for k in keys) and any(t.startswith(w) for t in tokens for w in words):
            return True
    return False

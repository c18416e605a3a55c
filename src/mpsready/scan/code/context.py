"""The per-file context the rule units read: import aliases, the guards around the current node, the literals
bound to names, the value flow (:class:`mpsready.scan.code.valueflow.ValueFlow`) and :meth:`FileContext.add`, the one
way a unit reports.

Guards: :attr:`FileContext.cuda_guard` (depth of enclosing CUDA-availability checks, computed lazily: call
:meth:`FileContext.resolve_guards` before reading it), :attr:`FileContext.dist_context` (distributed-only code),
:attr:`FileContext.mps_excluded` (branches an MPS tensor never takes), :meth:`FileContext.fallback_guard` (an
enclosing try/except with a fallback), :meth:`FileContext.flag_guard` (the option an enclosing ``if`` tests).
Literals: :meth:`FileContext.literal` and :meth:`FileContext.string_value` (a string, or the string a name was
assigned). Position: :attr:`FileContext.functions` and :attr:`FileContext.classes` (innermost last),
:attr:`FileContext.tree`. The visitor (:mod:`mpsready.scan.code.visitor`) keeps them up to date; units only read
them, report, and mark what they reported (``reported_packages``, ``selection_reported``, ...)."""

from __future__ import annotations

import ast
from typing import Any

from mpsready.findings import Severity
from mpsready.scan import knowledge
from mpsready.scan.code.astutil import (CAST_METHODS, device_like_name, dotted, end_of, is_cuda_literal,
                                        is_distributed_test, is_fallback_handler, kwarg, off_by_default, project_callee, walk)
from mpsready.scan.code.import_fallbacks import cuda_only_fallback
from mpsready.scan.code.valueflow import ValueFlow
from mpsready.scan.code.names import AliasMap
from mpsready.scan.code.result import CodeResult, raw_finding

class FileContext(ValueFlow):
    """The per-file model of one Python source (see the module doc); ``tree`` is the module's syntax tree."""

    def __init__(self, aliases: AliasMap, tree: ast.Module) -> None:
        super().__init__(aliases, tree)
        self.result = CodeResult()
        self.api = knowledge.cuda_api_table()
        # guards
        self.try_stack: list[ast.Try] = []  # enclosing try statements whose handlers are fallbacks
        self.cuda_guard = 0  # depth of enclosing `if <cuda available>:` bodies
        self.dist_context = 0  # depth of enclosing distributed-only code (if ddp:, def all_gather)
        self.mps_excluded = 0  # depth of branches a tensor on MPS never takes (`if x.device.type != "mps":`)
        self.in_test = 0  # inside the condition of an if / conditional expression
        # enclosing branches: (test, the truth value it has here, enclosing function, enclosing class); the Mac
        # evaluation (code/macfacts.py) decides whether a Mac ever gets here, only when a finding asks
        self.branches: list[tuple[ast.expr, bool, Any, Any]] = []
        self.mac: Any = None  # MacEval, built on first need
        self.mac_decided: dict[tuple[int, bool], dict[str, Any] | None] = {}
        self.mac_steps: dict[tuple[int, bool], dict[str, Any]] = {}  # branches the Mac's facts decide it enters
        # `if` conditions whose guard value is computed only when a finding (or an import) needs it:
        # [kind ('cuda' or 'dist'), test, None (not computed) or the result]; innermost last
        self.lazy_guards: list[list[Any]] = []
        self.unresolved = 0  # entries of lazy_guards not computed yet
        self.kernel_lib_guard: dict[str, str | None] = {}  # triton/cupy/... -> fallback location or None
        self.guarded_build: dict[int, int | None | bool] = {}  # id(function) -> fallback line (cached)
        # where the visitor is
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []  # enclosing definitions, innermost last
        self.classes: list[ast.ClassDef] = []  # enclosing class definitions, innermost last
        self.param_default: str | None = None  # the function whose parameter defaults are being visited
        self.passive_dtype = 0  # inside comparisons and dict tables: a dtype named there creates no tensor
        self.iterated: set[int] = set()  # id() of the iterables of for loops and comprehensions (visit_Tuple)
        self.compared: set[int] = set()  # id() of calls that are an operand of a comparison (or its attribute)
        self.inits: dict[int, list] | None = None  # id(method) -> [its class's __init__] (param_off_by_default)
        # literals bound to names
        self.string_vars: dict[str, tuple[str, int]] = {}  # name -> (string literal, line) for simple assignments
        self.choice_vars: dict[str, ast.IfExp] = {}  # name -> `"a" if test else "b"` it was assigned
        self.option_vars: dict[str, str] = {}  # name -> the option it holds (`opt_lower = args.opt.lower()`)
        # what the rule units have reported, so each reports once
        self.reported_packages: set[str] = set()  # DEP107 once per package per file
        self.device_defaults: set[int] = set()  # id() of torch.device('cuda') parameter defaults (reported as such)
        self.selection_reported: set[int] = set()  # id() of functions (or the module) with an API104 already
        self.casts_after: set[int] = set()  # id() of calls a cast follows in the same chain (`x.to(d).float()`)
        # the `mac_never` evidence of each enclosing except handler whose try body cannot raise on a Mac (round 4)
        self.dead_handlers: list[dict[str, Any]] = []

    # ---------------------------------------------------------------- reporting
    def add(self, rule, node: ast.AST, message: str, **kw: Any) -> None:
        self.resolve_guards()
        severity = kw.pop("severity", None) or rule.severity
        evidence = kw.pop("evidence", None) or {}
        if self.cuda_guard and rule.code.startswith("API") and rule.code not in ("API104", "API115"):
            # every API finding inside a CUDA check says so, whatever its severity; those above info drop to it
            user = self.user_flag_guard()
            if user is not None:  # `if args.cuda:`: a check only if the option's value flows from availability
                evidence = {**evidence, "user_flag_guard": user, "unguarded_severity": severity.value}
            severity = Severity.INFO if severity.rank > Severity.INFO.rank else severity
            evidence = {**evidence, "guarded": True}
            message += " (inside a CUDA-availability check, so skipped on a Mac)"
        if (self.mps_excluded or self.branches and self.mps_excluded_by_name()) \
                and rule.code.startswith(("API", "DTY")) and severity.rank > Severity.INFO.rank \
                and not self.mac_enters_mps_excluded():
            # the project's own MPS check keeps this branch off MPS (issue 23: it already picks MPS)
            severity = Severity.INFO
            evidence = {**evidence, "mps_excluded": True}
            message += " (in a branch that a tensor on MPS never takes)"
        if self.dead_handlers and severity.rank > Severity.INFO.rank and rule.code[:3] in ("API", "DTY", "EXT", "DEP"):
            # issue 32, round 4: the handler of a `try:` whose body cannot raise on a Mac never runs there
            severity = Severity.INFO
            evidence = {**evidence, "mac_never": self.dead_handlers[-1]}
            message += f" (a Mac never runs this: {self.dead_handlers[-1]['test']})"
        if self.branches and severity.rank > Severity.INFO.rank and rule.code[:3] in ("API", "DTY", "EXT", "DEP"):
            never = self.mac_never()
            if never is not None:  # issue 32: a branch that the Mac's facts decide against holds no limit
                severity = Severity.INFO
                evidence = {**evidence, "mac_never": never}
                message += f" (a Mac never runs this: {never['test']} is {never['value']} there)"
            else:
                enters = [step for step in (self.mac_steps.get((id(t), w)) for t, w, _f, _c in self.branches)
                          if step is not None and step.get("entered")]
                if enters:  # the branches the Mac's facts decide it takes: why this runs there
                    evidence = {**evidence, "mac_enters": [{k: v for k, v in step.items() if k != "entered"}
                                                           for step in enters]}
                param = self.param_test()
                if param is not None:  # a parameter decides it: the callers' arguments may (model/call_sites.py)
                    evidence = {**evidence, "param_test": param}
                open_ = [step for step in (self.mac_steps.get((id(t), w)) for t, w, _f, _c in self.branches)
                         if step is not None and step.get("undecided")]
                if open_:  # a value the scan cannot know decides whether this runs on a Mac
                    evidence = {**evidence, "undecided": [{k: v for k, v in step.items() if k != "undecided"}
                                                          for step in open_]}
        if self.dist_context and "scope" not in kw:
            kw["scope"] = "distributed"
        switch = self.flag_guard()
        if isinstance(switch, tuple):  # `if 'fused' in args.opt.lower():` -> the option and the test on its value
            evidence = {**evidence, "flag_guard": switch[0], "flag_test": [switch[1], switch[2]]}
        elif switch is not None:
            evidence = {**evidence, "flag_guard": switch}
            if self.functions and self.param_off_by_default(switch):
                evidence["param_guard"] = switch
        self.result.findings.append(raw_finding(rule, getattr(node, "lineno", 1), getattr(node, "col_offset", 0), message,
                                         severity=severity, evidence=evidence, end=end_of(node), **kw))


    def mps_branch_of_name(self, test: ast.expr) -> str | None:
        """:func:`~mpsready.scan.code.astutil.mps_branch` of a name (or ``not name``) assigned once, in the enclosing
        function or the module, from an MPS test (``is_mps = x.device.type == "mps"`` ... ``float32 if is_mps else
        float64``, issue 32)."""
        from mpsready.scan.code.astutil import mps_branch
        negated = type(test) is ast.UnaryOp and test.op.__class__ is ast.Not
        name = test.operand if negated else test  # type: ignore[attr-defined]
        if type(name) is not ast.Name:
            return None
        if self.mac is None:
            from mpsready.scan.code.macfacts import MacEval
            self.mac = MacEval(self)
        scope = self.mac.local_assigns(self.functions[-1]) if self.functions else {}
        values = scope.get(name.id) if name.id in scope else self.mac.module_assigns().get(name.id)
        if not values or len(values) != 1 or values[0] is None:
            return None
        side = mps_branch(values[0])
        if side is None or not negated:
            return side
        return "orelse" if side == "body" else "body"


    def param_test(self) -> dict[str, Any] | None:
        """The innermost enclosing branch of the current function whose test the Mac's facts leave open and which
        reads one of the function's parameters (``if not is_dist: return``): the function, the parameter, its
        position, the test's line and the truth value the branch needs (issue 32, through callers)."""
        if not self.functions:
            return None
        fn = self.functions[-1]
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        for test, want, where, _cls in reversed(self.branches):
            if where is not fn:
                continue
            used = [n.id for n in ast.walk(test) if isinstance(n, ast.Name) and n.id in params]
            if used and self.mac_decided.get((id(test), want)) is None:
                return {"function": fn.name, "param": used[0], "position": params.index(used[0]),
                        "method": bool(params) and params[0] in ("self", "cls"), "line": test.lineno,
                        "want": want}
        return None


    def mps_excluded_by_name(self) -> bool:
        """Whether an enclosing branch is one an MPS tensor never takes through a name bound to an MPS test
        (:meth:`mps_branch_of_name`); computed only when a finding asks."""
        for test, want, _fn, _cls in self.branches:
            if test.__class__ in (ast.Name, ast.UnaryOp):
                side = self.mps_branch_of_name(test)
                if (side == "body" and want) or (side == "orelse" and not want):
                    return True
        return False


    def mac_enters_mps_excluded(self) -> bool:
        """Whether the Mac's facts decide that a branch the MPS-check rule excludes (``if dev != "mps":``) is entered
        after all: ``dev`` comes from a helper that never returns ``'mps'`` (issue 32)."""
        from mpsready.scan.code.astutil import mps_branch
        for test, want, fn, cls in self.branches:
            side = mps_branch(test)
            if (side == "body" and want) or (side == "orelse" and not want):
                if self.mac is None:
                    from mpsready.scan.code.macfacts import MacEval
                    self.mac = MacEval(self)
                if self.mac.truth(test, fn, cls) == want and not self.mac.used_default:
                    return True
        return False


    def cannot_raise(self, body: list[ast.stmt]) -> dict[str, Any] | None:
        """``mac_never`` evidence when ``body`` (a ``try:`` body) cannot raise on a Mac, else None (issue 32, round
        4): it binds names to constants (strings, numbers, lists and tuples of them) and branches on tests the Mac's
        facts decide (``if torch.backends.mps.is_available():``), only the taken branch counted. Any call, subscript or
        attribute read outside such a test may raise, and so does a test decided only by an option's default."""
        facts: list[str] = []

        def constant(node: ast.expr) -> bool:
            if isinstance(node, ast.Constant):
                return True
            return isinstance(node, (ast.List, ast.Tuple)) and all(constant(e) for e in node.elts)

        def safe(stmts: list[ast.stmt]) -> bool:
            for st in stmts:
                if isinstance(st, ast.Pass) or (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)):
                    continue
                if isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets) \
                        and constant(st.value):
                    continue
                if isinstance(st, ast.If):
                    if self.mac is None:
                        from mpsready.scan.code.macfacts import MacEval
                        self.mac = MacEval(self)
                    fn = self.functions[-1] if self.functions else None
                    cls = self.classes[-1] if self.classes else None
                    truth = self.mac.truth(st.test, fn, cls)
                    if truth is None or self.mac.used_default or not self.mac.facts:
                        return False
                    facts.extend(self.mac.facts)
                    if not safe(st.body if truth else st.orelse):
                        return False
                    continue
                return False
            return True

        if not body or not safe(body):
            return None
        return {"test": "the except handler runs only when its try body raises, and it cannot raise on a Mac",
                "line": body[0].lineno, "value": "False", "facts": list(dict.fromkeys(facts))}

    def mac_never(self) -> dict[str, Any] | None:
        """The first enclosing branch whose test a Mac decides against (``{"test", "line", "value", "facts"}``),
        or None (:mod:`mpsready.scan.code.macfacts`)."""
        for test, want, fn, cls in self.branches:
            key = (id(test), want)
            if key not in self.mac_decided:
                if self.mac is None:
                    from mpsready.scan.code.macfacts import MacEval
                    self.mac = MacEval(self)
                truth = self.mac.truth(test, fn, cls)
                # a test decided by an option's default is the user's switch (behind_flag), not a fact of the Mac
                self.mac_decided[key] = None if truth is None or truth == want or self.mac.used_default else {
                    "test": ast.unparse(test)[:120], "line": test.lineno, "value": str(truth),
                    "facts": list(self.mac.facts)}
                if (truth is None or self.mac.used_default) and self.mac.undecided:  # item 6: what decides it
                    self.mac_steps[key] = {"test": ast.unparse(test)[:120], "line": test.lineno,
                                           "decided_by": list(dict.fromkeys(self.mac.undecided)),
                                           "if_true": "runs" if want else "does not run",
                                           "if_false": "does not run" if want else "runs", "undecided": True}
                if truth is not None and truth == want and self.mac.facts:
                    self.mac_steps[key] = {"test": ast.unparse(test)[:120], "line": test.lineno, "value": str(truth),
                                           "facts": list(self.mac.facts), "entered": True}
            if self.mac_decided[key] is not None:
                return self.mac_decided[key]
        return None


    def kernel(self, rule, node: ast.AST, message: str, lib: str) -> None:
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

    # ---------------------------------------------------------------- guards
    def push_guard(self, kind: str, test: ast.AST) -> list[Any]:
        entry = [kind, test, None]
        self.lazy_guards.append(entry)
        self.unresolved += 1
        return entry


    def pop_guard(self, entry: list[Any]) -> None:
        self.lazy_guards.pop()
        if entry[2] is None:
            self.unresolved -= 1
        elif entry[2]:
            if entry[0] == "cuda":
                self.cuda_guard -= 1
            else:
                self.dist_context -= 1


    def resolve_guards(self) -> None:
        """Compute the pending guard tests (before reading cuda_guard/dist_context, and before an import
        changes the aliases the tests are resolved with). Most `if` bodies hold no finding, so most tests
        are never computed."""
        if not self.unresolved:
            return
        for entry in self.lazy_guards:
            if entry[2] is None:
                if entry[0] == "cuda":
                    entry[2] = guarded = self.is_cuda_test(entry[1])
                    self.cuda_guard += guarded
                else:
                    entry[2] = guarded = is_distributed_test(entry[1])
                    self.dist_context += guarded
        self.unresolved = 0


    def is_cuda_test(self, test: ast.AST) -> bool:
        """A condition that is False on a Mac: torch.cuda.is_available(), device == 'cuda', args.cuda, use_cuda.
        A negated one is True there, so its body runs on a Mac: ``not torch.cuda.is_available()``,
        ``x.device != torch.device("cuda")`` (stable-diffusion's samplers then call ``.to("cuda")``); an ``and``
        is False when one of its parts is, an ``or`` only when all are."""
        if type(test) is ast.UnaryOp and isinstance(test.op, ast.Not):
            return False
        if type(test) is ast.BoolOp:
            parts = [self.is_cuda_test(v) for v in test.values]
            return any(parts) if isinstance(test.op, ast.And) else all(parts)
        if type(test) is ast.Compare and any(isinstance(op, (ast.NotEq, ast.IsNot, ast.NotIn)) for op in test.ops):
            return False
        for n in walk(test):
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


    def fallback_guard(self) -> str | None:
        """Line of the nearest enclosing try/except whose handler provides a fallback, or ``None``."""
        for tr in reversed(self.try_stack):
            for h in tr.handlers:
                if is_fallback_handler(h) and not cuda_only_fallback(h):
                    return str(h.lineno)
        return None


    def auto_device_guard(self) -> tuple[str, str] | None:
        """The device setting an enclosing `if config.device == 'auto':` / `if args.device is None:` tests (as
        written, ``config.device``) and the value it tests for (``'auto'`` or ``None``, as written), or ``None``."""
        for entry in reversed(self.lazy_guards):
            test = entry[1]
            if entry[0] != "cuda" or not isinstance(test, ast.Compare) or len(test.ops) != 1:
                continue
            left, right = test.left, test.comparators[0]
            label = left.attr if isinstance(left, ast.Attribute) else left.id if isinstance(left, ast.Name) else ""
            if "device" not in label.lower():
                continue
            if (isinstance(test.ops[0], ast.Eq) and isinstance(right, ast.Constant) and right.value == "auto") or (
                    isinstance(test.ops[0], ast.Is) and isinstance(right, ast.Constant) and right.value is None):
                return dotted(left) or label, repr(right.value)
        return None


    def param_off_by_default(self, name: str) -> bool:
        """Whether ``name`` is a parameter of an enclosing function, or of the ``__init__`` of the class around the
        innermost method (``if self.flash:`` in ``forward`` with ``__init__(self, flash=False)``), whose default is
        ``False`` or ``None``: code behind it runs only when a caller turns it on (issue 23)."""
        fns = list(self.functions)
        if self.inits is None:  # method -> its class's __init__, built once per file on first need
            self.inits = {}
            stack = list(self.tree.body) if self.tree is not None else []
            while stack:  # statements only: classes sit in statement bodies, never inside expressions
                stmt = stack.pop()
                if stmt.__class__ is ast.ClassDef:
                    init = [s for s in stmt.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"]
                    for s in stmt.body:
                        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            self.inits[id(s)] = init
                for part in ("body", "orelse", "finalbody"):
                    block = getattr(stmt, part, None)
                    if block.__class__ is list:
                        stack += block
                for handler in getattr(stmt, "handlers", ()):
                    stack += handler.body
        fns += self.inits.get(id(self.functions[-1]), [])
        return off_by_default(name, fns)


    def user_flag_guard(self) -> str | None:
        """The attribute (``cuda`` of ``if args.cuda:``) when every CUDA guard around this point is a plain test
        of an attribute named for CUDA: maybe a user's flag rather than a CUDA-availability check. The engine
        decides from the project's options and assignments (``model.project.user_flag_guards``)."""
        guards = [e for e in self.lazy_guards if e[0] == "cuda" and e[2]]
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


    def flag_guard(self) -> str | tuple[str, str, str] | None:
        """The option an enclosing `if args.use_triton:` (or `if use_triton:`) tests, innermost first, or
        ``(option, "in" | "eq", value)`` for a test on an option's value (`if 'fused' in args.opt.lower():`,
        `if opt_lower == 'lamb':` with `opt_lower = args.opt.lower()`, ConvNeXt's optimizer factory); the
        engine decides from the project's configuration surfaces whether it is off by default."""
        for entry in reversed(self.lazy_guards):
            if entry[0] != "cuda":
                continue
            test = entry[1]
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.In, ast.Eq)):
                left, right = test.left, test.comparators[0]
                const, subject = (left, right) if isinstance(left, ast.Constant) else (right, left)
                option = self.option_of(subject)
                if isinstance(const, ast.Constant) and isinstance(const.value, str) and option:
                    return option, "in" if isinstance(test.ops[0], ast.In) else "eq", const.value
            if isinstance(test, ast.Attribute) and isinstance(test.value, (ast.Name, ast.Attribute)):
                return test.attr
            if isinstance(test, ast.Name):
                return test.id
        return None


    def option_of(self, node: ast.AST) -> str | None:
        """The option a value reads: ``args.opt`` / ``args.opt.lower()`` -> ``opt``, or a name bound to one."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args \
                and node.func.attr in ("lower", "strip", "upper", "casefold"):
            node = node.func.value
        if isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute)):
            return node.attr
        if isinstance(node, ast.Name):
            return self.option_vars.get(node.id)
        return None

    # ---------------------------------------------------------------- literals and names
    def literal(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return None


    def string_value(self, node: ast.AST) -> tuple[str | None, int | None]:
        """A string literal, or the literal a simple name was assigned (with that line)."""
        lit = self.literal(node)
        if lit is not None:
            return lit, None
        if isinstance(node, ast.Name) and node.id in self.string_vars:
            return self.string_vars[node.id]
        if isinstance(node, ast.Attribute):
            key = dotted(node)
            if key and key in self.string_vars:
                return self.string_vars[key]
        return None, None


    def is_module(self, node: ast.AST) -> bool:
        name = self.q(node) or ""
        head = name.split(".")[0]
        return isinstance(node, (ast.Name, ast.Attribute)) and self.aliases.is_imported(head) and head in (
            "torch", "numba", "cupy", "pycuda", "cuda")


    def flagged_name(self, arg: ast.AST) -> bool:
        """A device-named variable was already reported where it was assigned."""
        return isinstance(arg, ast.Name) and device_like_name(arg.id)

    # ---------------------------------------------------------------- assignments (tiny data flow)
    def cpu_move_holds(self, value: ast.Call) -> bool:
        """Whether a tensor moved to the CPU here (``x.cpu()``, ``x.to("cpu")``) is on the CPU afterwards on a Mac
        (issue 32, residence): the move is unconditional, or every enclosing branch is the one a tensor on MPS takes
        (``if x.device.type == "mps": x = x.cpu()``: on a Mac a tensor is on MPS or already on the CPU). A move in a
        branch a Mac never enters (``if x.is_cuda: x = x.cpu()``) or an undecided one leaves it where it was. A tensor
        made on the CPU (``torch.from_numpy``) is a CPU tensor wherever it is made."""
        from mpsready.scan.code.astutil import mps_branch

        func = value.func
        if not (func.__class__ is ast.Attribute and func.attr in ("cpu", "to")) or not self.branches:
            return True
        return all(mps_branch(test) == ("orelse" if body else "body") or self.mps_branch_of_name(test) == (
            "orelse" if body else "body") for test, body, _fn, _cls in self.branches)

    def track_tuple_assign(self, node: ast.Assign) -> None:
        """``a, b = a.cpu(), b.cpu()``: each name of a tuple target paired with a tuple value (CPU tensors only)."""
        value = node.value
        for target in node.targets:
            if target.__class__ is not ast.Tuple or value.__class__ is not ast.Tuple or len(target.elts) != len(value.elts):
                continue
            for t, v in zip(target.elts, value.elts):
                if t.__class__ is not ast.Name:
                    continue
                if v.__class__ is ast.Call and self.cpu_tensor_call(v, self.q(v.func) or "") and self.cpu_move_holds(v):
                    self.cpu_vars.add(t.id)
                else:
                    self.cpu_vars.discard(t.id)

    def track_assign(self, node: ast.Assign) -> None:
        """Remember the string literals, NumPy float64 arrays, CPU tensors and project-call results bound to
        names and attributes, for the units that read them at later statements."""
        value = node.value
        if value.__class__ is ast.Tuple and node.targets[0].__class__ is ast.Tuple:
            self.track_tuple_assign(node)
        lit = value.value if value.__class__ is ast.Constant and value.value.__class__ is str else None  # literal()
        is_call = type(value) is ast.Call  # is_cpu_tensor and project_callee are False/None for anything else
        # the callee's qualified name, asked by the NumPy and the CPU-tensor tests: resolved once here
        func_name = (self.q(value.func) or "") if type(value) is ast.Call else ""
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                key = dotted(target)
                if key and lit is not None:
                    self.string_vars[key] = (lit, node.lineno)
                if key and (self.np_f64_vars or is_call) and (  # self.alphas_cumprod = np.cumprod(alphas)
                        self.numpy_f64_call(value, func_name) if type(value) is ast.Call else self.is_numpy_f64(value)):
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
                option = self.option_of(node.value) if isinstance(node.value, (ast.Attribute, ast.Call)) else None
                if option:
                    self.option_vars[target.id] = option
                else:
                    self.option_vars.pop(target.id, None)
                if (self.np_f64_vars or is_call) and (
                        self.numpy_f64_call(value, func_name) if type(value) is ast.Call else self.is_numpy_f64(value)):
                    self.np_f64_vars.add(target.id)
                else:
                    self.np_f64_vars.discard(target.id)
                if type(value) is ast.Call and self.cpu_tensor_call(value, func_name) and self.cpu_move_holds(value):
                    self.cpu_vars.add(target.id)
                else:
                    self.cpu_vars.discard(target.id)
                if (self.torch_f64_vars or self.cpu_vars or node.value.__class__ is ast.Call
                        and any(k.arg == "dtype" for k in node.value.keywords)) and self.is_torch_cpu_f64(node.value):
                    self.torch_f64_vars[target.id] = node.lineno
                else:
                    self.torch_f64_vars.pop(target.id, None)
                callee = project_callee(node.value) if is_call else None
                if callee is not None:
                    self.call_vars[target.id] = callee
                else:
                    self.call_vars.pop(target.id, None)


    def note_return(self, node: ast.Return) -> None:
        """A function returning a NumPy float64 array (a factory, ``.astype(float)``, or a name bound to one)."""
        if not self.functions or node.value is None:
            return
        value = node.value
        if (isinstance(value, ast.Name) and value.id in self.np_f64_vars) or self.is_numpy_f64(value):
            name = self.functions[-1].name
            if name not in self.result.f64_returns:
                self.result.f64_returns.append(name)


    def note_cpu_f64(self, node: ast.Call, name: str, attr: str | None) -> None:
        """Float64 made on the CPU is DTY101 info at its dtype; the move of such a tensor before a cast (``.to(dev)``,
        ``.cuda()``, a module buffer or parameter, which move with the module) is DTY101 at the move."""
        from mpsready.scan.rules import dtypes as T

        func = node.func
        # `attr` is func.attr when func is an Attribute (else None): a move is always a method call
        moves = attr == "cuda" or (attr == "to" and node.args + node.keywords and not self.casts(node))
        if moves and isinstance(func, ast.Attribute):
            recv: ast.expr | None = func.value
            while isinstance(recv, (ast.Call, ast.Subscript)):
                if isinstance(recv, ast.Call):
                    f = recv.func
                    if isinstance(f, ast.Attribute) and (f.attr in CAST_METHODS or f.attr == "to" and self.casts(recv)):
                        break
                    self.moved_calls.add(id(recv))
                    recv = f.value if isinstance(f, ast.Attribute) else None
                else:
                    recv = recv.value
        sunk = None
        if moves and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            sunk = func.value
        elif attr == "register_buffer" and len(node.args) >= 2 and isinstance(node.args[1], ast.Name):
            sunk = node.args[1]
        elif name in ("torch.nn.Parameter", "torch.nn.parameter.Parameter") and node.args and isinstance(node.args[0], ast.Name):
            sunk = node.args[0]
        if sunk is not None and sunk.id in self.torch_f64_vars:
            self.add(T.FLOAT64, node, f"{sunk.id} holds a float64 tensor made on the CPU (line "
                     f"{self.torch_f64_vars[sunk.id]}) and moves to a device before any cast: MPS has no float64")
        if id(node) not in self.moved_calls and self.cpu_f64_factory(node):
            self.cpu_f64_nodes[id(kwarg(node, "dtype"))] = name


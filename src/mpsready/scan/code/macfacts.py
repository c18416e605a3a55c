"""The project read as a Mac runs it (issue 32): an abstract interpretation of device, dtype-choice and switch
values in one file, with the facts of a Mac fixed, to decide which branches a Mac never enters.

**Domain.** An abstract value is either ``None`` (unknown: any value) or a non-empty ``frozenset`` of concrete
atoms: strings (a device is its string, ``torch.device("cuda:0")`` is ``"cuda:0"``; a string built at run time
from a constant prefix, ``"cuda:" + str(i)`` or ``f"cuda:{i}"``, is the prefix followed by ``*``), booleans,
integers, ``None`` and tuples of constants. Joins are set unions (unknown absorbs); a set of more than
:data:`MAX_ATOMS` atoms is unknown. A test is *decided* when every atom of its value has the same truth value.

**The facts of a Mac** (:data:`FACTS`, PyTorch 2.13.0 on macOS arm64 with the MPS backend built):
``torch.cuda.is_available()`` is False, ``torch.cuda.device_count()`` 0, ``torch.backends.mps.is_available()``
and ``is_built()`` True, ``torch.accelerator.is_available()`` True and ``current_accelerator()`` the device
``mps`` (torch/accelerator/__init__.py), an object built by a framework that chooses the device itself has that
framework's choice as ``.device`` (``accelerate.Accelerator()``, ``transformers.TrainingArguments(...)``: the sourced
table ``data/device_choosers.yaml``), ``sys.platform`` ``"darwin"``, ``platform.system()`` ``"Darwin"``,
``platform.machine()`` ``"arm64"``; ``torch.distributed.is_nccl_available()`` False (macOS wheels have no NCCL) and,
the main command running as one process, ``torch.distributed.is_initialized()`` False and the launcher's variables
(:data:`LAUNCHER_VARS`: ``RANK``, ``WORLD_SIZE``, ...) unset. No tensor lives on CUDA on a Mac, so ``t.is_cuda`` is False and
``t.device.type`` is ``"mps"`` or ``"cpu"`` for any tensor or module ``t``. A device option the outlook proposes
to set (an argparse option whose destination's last word is ``device``/``accelerator`` or whose ``choices`` name
``mps``) holds ``"mps"``; any other option holds its default (``store_true`` False, ``store_false`` True).

**Names.** A name's value is the join of every value assigned to it in the enclosing function (then in the module
body: flow-insensitive, ``if``/``try``/``with``/``for`` bodies included), a function's parameter is unknown, and
``self.X`` joins what the methods of the enclosing class assign to ``self.X`` (``__init__`` and the others).
A call of a function defined in the same file (or of a method of the enclosing class through ``self.``) is the
join of the ``return`` values its body can reach, its branches decided by the same facts (``if
torch.cuda.is_available(): return "cuda"`` is skipped, a following ``if torch.backends.mps.is_available():
return "mps"`` ends the search), up to :data:`MAX_DEPTH` calls deep.

**Limits.** One file at a time (a helper imported from another module is unknown), no loop or exception
semantics (a loop body counts as run once or more), containers and keyword arguments are not followed,
other ``os.environ`` / ``os.getenv`` values are unknown and named (:attr:`MacEval.undecided`), and an unknown value
decides nothing: the analysis only ever removes limits that a Mac provably never reaches.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_ATOMS = 8
MAX_DEPTH = 4

# qualified callee -> (value, the fact as printed); PyTorch 2.13.0 sources: torch/cuda/__init__.py
# (is_available, device_count), torch/backends/mps/__init__.py, torch/accelerator/__init__.py
FACTS: dict[str, tuple[Any, str]] = {
    "torch.cuda.is_available": (False, "torch.cuda.is_available() is False"),
    "torch.cuda.device_count": (0, "torch.cuda.device_count() is 0"),
    "torch.cuda.is_bf16_supported": (False, "torch.cuda.is_bf16_supported() is False"),
    "torch.cuda.is_initialized": (False, "torch.cuda.is_initialized() is False"),
    "torch.backends.mps.is_available": (True, "torch.backends.mps.is_available() is True"),
    "torch.backends.mps.is_built": (True, "torch.backends.mps.is_built() is True"),
    "torch.backends.cudnn.is_available": (False, "torch.backends.cudnn.is_available() is False"),
    "torch.accelerator.is_available": (True, "torch.accelerator.is_available() is True"),
    "torch.accelerator.current_accelerator": ("mps", "torch.accelerator.current_accelerator() is mps"),
    "torch.accelerator.device_count": (1, "torch.accelerator.device_count() is 1"),
    # macOS wheels are built without NCCL (torch/distributed: is_nccl_available); one process, no launcher
    "torch.distributed.is_nccl_available": (False, "torch.distributed.is_nccl_available() is False"),
    "torch.distributed.is_initialized": (False, "torch.distributed.is_initialized() is False (one process)"),
    "platform.system": ("Darwin", "platform.system() is 'Darwin'"),
    "platform.machine": ("arm64", "platform.machine() is 'arm64'"),
    "platform.processor": ("arm", "platform.processor() is 'arm'"),
}
ATTR_FACTS: dict[str, tuple[Any, str]] = {
    "sys.platform": ("darwin", "sys.platform is 'darwin'"),
    "torch.version.cuda": (None, "torch.version.cuda is None (a macOS wheel)"),
}
_STR_METHODS = ("lower", "upper", "strip", "casefold")
_ENV_READS = ("os.environ.get", "os.getenv")
# variables a multi-process launcher (torchrun, torch.distributed.launch, SLURM) sets: absent when a Mac runs the
# main command as one process (torch/distributed/run.py sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR/PORT)
LAUNCHER_VARS = frozenset(("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                           "SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_RANK"))
# names that usually hold settings, not tensors or modules: their `.device` is a configured value
_SETTINGS = frozenset(("self", "args", "opt", "opts", "cfg", "config", "conf", "hparams", "hp", "params",
                       "options", "settings", "flags", "FLAGS", "training_args", "train_args", "kwargs"))


@dataclass(frozen=True)
class Built:
    """An object a device-choosing framework builds (``accelerate.Accelerator()``): its ``.device`` on a Mac."""

    qual: str
    device: str


_CHOOSERS: dict[str, str] | None = None


def choosers() -> dict[str, str]:
    """Qualified constructor or call -> the device it gives on a Mac (``data/device_choosers.yaml``, issue 32)."""
    global _CHOOSERS
    if _CHOOSERS is None:
        import yaml

        data = yaml.safe_load((Path(__file__).parent.parent / "data" / "device_choosers.yaml").read_text("utf-8"))
        _CHOOSERS = {name: entry["device"] for entry in data.get("constructors", []) for name in entry["names"]}
    return _CHOOSERS


def _atoms(value: Any) -> frozenset:
    return frozenset((value,))


def _join(values: list[frozenset | None]) -> frozenset | None:
    out: set = set()
    for v in values:
        if v is None:
            return None
        out |= v
    return frozenset(out) if out and len(out) <= MAX_ATOMS else None


def _device_type(atom: Any) -> Any:
    return atom.split(":")[0] if isinstance(atom, str) else atom


class MacEval:
    """Evaluates expressions of one file under the Mac's facts. ``ctx`` is the file's
    :class:`~mpsready.scan.code.context.FileContext` (aliases, enclosing functions and classes, the tree)."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.facts: list[str] = []  # the facts the last decision used, in order, each once
        self.undecided: list[str] = []  # what an unknown value came from (an environment variable)
        self.used_default = False  # the last decision read an option's default (a user's choice, not a fact)
        self._module: dict[str, list[ast.expr]] | None = None
        self._defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] | None = None
        self._locals: dict[int, dict[str, list[ast.expr]]] = {}
        self._self_attrs: dict[int, dict[str, list[ast.expr]]] = {}
        self._options: dict[str, tuple[frozenset | None, str | None]] | None = None
        self._stack: set[int] = set()

    # ---------------------------------------------------------------- decisions
    def truth(self, test: ast.expr, fn: ast.AST | None, cls: ast.ClassDef | None) -> bool | None:
        """True or False when every value ``test`` can take on a Mac has that truth value, else None."""
        self.facts = []
        self.undecided = []
        self.used_default = False
        value = self.eval(test, fn, cls, 0)
        if value is None:
            return None
        truths = {bool(a) for a in value}
        return truths.pop() if len(truths) == 1 else None

    def _fact(self, text: str) -> None:
        if text not in self.facts:
            self.facts.append(text)

    # ---------------------------------------------------------------- the environment (built on first need)
    def module_assigns(self) -> dict[str, list[ast.expr]]:
        if self._module is None:
            self._module, self._defs = {}, {}
            self._collect(self.ctx.tree.body if self.ctx.tree is not None else [], self._module, self._defs)
        return self._module

    def defs(self) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
        self.module_assigns()
        assert self._defs is not None
        return self._defs

    @staticmethod
    def _collect(body: list[ast.stmt], out: dict[str, list[ast.expr]], defs: dict | None = None) -> None:
        """Assignments to plain names in a block and the blocks it controls (not nested definitions)."""
        stack = list(body)
        while stack:
            stmt = stack.pop()
            cls = stmt.__class__
            if cls is ast.Assign:
                for t in stmt.targets:  # type: ignore[attr-defined]
                    if t.__class__ is ast.Name:
                        out.setdefault(t.id, []).append(stmt.value)  # type: ignore[attr-defined]
                    elif t.__class__ in (ast.Tuple, ast.List):
                        for e in t.elts:  # type: ignore[attr-defined]
                            if e.__class__ is ast.Name:
                                out.setdefault(e.id, []).append(None)  # type: ignore[arg-type]
            elif cls in (ast.AnnAssign, ast.AugAssign) and stmt.target.__class__ is ast.Name:  # type: ignore[attr-defined]
                value = stmt.value if cls is ast.AnnAssign else None  # type: ignore[attr-defined]
                out.setdefault(stmt.target.id, []).append(value)  # type: ignore[attr-defined]
            elif cls in (ast.For, ast.AsyncFor) and stmt.target.__class__ is ast.Name:  # type: ignore[attr-defined]
                out.setdefault(stmt.target.id, []).append(None)  # type: ignore[attr-defined]
                stack += stmt.body + stmt.orelse  # type: ignore[attr-defined]
                continue
            elif cls in (ast.FunctionDef, ast.AsyncFunctionDef):
                if defs is not None:
                    defs.setdefault(stmt.name, stmt)  # type: ignore[attr-defined]
                out.setdefault(stmt.name, []).append(None)  # type: ignore[attr-defined, arg-type]
                continue
            elif cls is ast.ClassDef:
                out.setdefault(stmt.name, []).append(None)  # type: ignore[attr-defined, arg-type]
                continue
            elif cls in (ast.Import, ast.ImportFrom):
                for alias in stmt.names:  # type: ignore[attr-defined]
                    bound = alias.asname or alias.name.split(".")[0]
                    out.setdefault(bound, []).append(None)  # type: ignore[arg-type]
                continue
            elif cls in (ast.Global, ast.Nonlocal):
                for name in stmt.names:  # type: ignore[attr-defined]
                    out.setdefault(name, []).append(None)  # type: ignore[arg-type]
                continue
            for part in ("body", "orelse", "finalbody"):
                block = getattr(stmt, part, None)
                if block.__class__ is list:
                    stack += block
            for h in getattr(stmt, "handlers", ()):
                stack += h.body
                if h.name:
                    out.setdefault(h.name, []).append(None)  # type: ignore[arg-type]
            if cls in (ast.With, ast.AsyncWith):
                for item in stmt.items:  # type: ignore[attr-defined]
                    if item.optional_vars.__class__ is ast.Name:
                        out.setdefault(item.optional_vars.id, []).append(None)

    def local_assigns(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[ast.expr]]:
        got = self._locals.get(id(fn))
        if got is None:
            got = {}
            self._collect(fn.body, got)
            text = getattr(self.ctx, "text", None)
            for n in ast.walk(fn) if text is None or ":=" in text else ():  # walrus-bound names are unknown
                if n.__class__ is ast.NamedExpr and n.target.__class__ is ast.Name:  # type: ignore[attr-defined]
                    got.setdefault(n.target.id, []).append(None)  # type: ignore[attr-defined, arg-type]
            args = fn.args
            for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                if a is not None:
                    got.setdefault(a.arg, []).append(None)  # type: ignore[arg-type]
            self._locals[id(fn)] = got
        return got

    def self_attrs(self, cls: ast.ClassDef) -> dict[str, list[ast.expr]]:
        got = self._self_attrs.get(id(cls))
        if got is None:
            got = {}
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for n in ast.walk(stmt):
                        if n.__class__ is ast.Assign:
                            for t in n.targets:  # type: ignore[attr-defined]
                                if t.__class__ is ast.Attribute and t.value.__class__ is ast.Name \
                                        and t.value.id == "self":  # type: ignore[attr-defined]
                                    got.setdefault(t.attr, []).append(n.value)  # type: ignore[attr-defined]
            self._self_attrs[id(cls)] = got
        return got

    def options(self) -> dict[str, tuple[frozenset | None, str | None]]:
        """argparse options of the file: destination -> (its value on the Mac, the fact that says so)."""
        if self._options is None:
            self._options = {}
            tree = self.ctx.tree
            for n in ast.walk(tree) if tree is not None else ():
                if n.__class__ is ast.Call and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument":
                    self._option(n)
        return self._options

    def _option(self, call: ast.Call) -> None:
        assert self._options is not None
        names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        dest_node = kw.get("dest")
        longs = [s for s in names if s.startswith("--")] or names
        if isinstance(dest_node, ast.Constant) and isinstance(dest_node.value, str):
            dest = dest_node.value
        elif longs:
            dest = longs[0].lstrip("-").replace("-", "_")
        else:
            return
        choices = kw.get("choices")
        choice_vals = [e.value for e in choices.elts if isinstance(e, ast.Constant)] \
            if isinstance(choices, (ast.List, ast.Tuple, ast.Set)) else []
        last = dest.lower().replace("-", "_").split("_")[-1]
        action = kw.get("action")
        act = action.value if isinstance(action, ast.Constant) else None
        default = kw.get("default")
        if act is None and (last in ("device", "accelerator") or "mps" in choice_vals):
            self._options[dest] = (_atoms("mps"), f"{longs[0] if longs else dest} mps (the proposed flag)")
        elif act == "store_true":
            self._options[dest] = (_atoms(False), f"{longs[0] if longs else dest} is off by default")
        elif act == "store_false":
            self._options[dest] = (_atoms(True), f"{longs[0] if longs else dest} is on by default")
        elif default is None:
            self._options[dest] = (_atoms(None), f"{longs[0] if longs else dest} defaults to None")
        elif isinstance(default, ast.Constant):
            self._options[dest] = (_atoms(default.value), f"{longs[0] if longs else dest} defaults to "
                                   f"{default.value!r}")
        else:
            self._options[dest] = (None, None)

    # ---------------------------------------------------------------- evaluation
    def eval(self, node: ast.expr | None, fn: Any, cls: Any, depth: int) -> frozenset | None:
        if node is None:
            return None
        method = getattr(self, "_e_" + node.__class__.__name__, None)
        return method(node, fn, cls, depth) if method is not None else None

    def _e_Constant(self, node: ast.Constant, fn: Any, cls: Any, depth: int) -> frozenset | None:
        return _atoms(node.value)

    def _e_Tuple(self, node: ast.Tuple, fn: Any, cls: Any, depth: int) -> frozenset | None:
        if all(isinstance(e, ast.Constant) for e in node.elts):
            return _atoms(tuple(e.value for e in node.elts))  # type: ignore[attr-defined]
        return None

    _e_List = _e_Set = _e_Tuple

    def _e_JoinedStr(self, node: ast.JoinedStr, fn: Any, cls: Any, depth: int) -> frozenset | None:
        head = node.values[0] if node.values else None
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            return _atoms(head.value + ("*" if len(node.values) > 1 else ""))
        return None

    def _e_BinOp(self, node: ast.BinOp, fn: Any, cls: Any, depth: int) -> frozenset | None:
        if isinstance(node.op, (ast.Add, ast.Mod)):
            left = self.eval(node.left, fn, cls, depth)
            if left is not None and all(isinstance(a, str) for a in left):
                return frozenset(a.split("%")[0] + "*" for a in left)
        return None

    def _e_Name(self, node: ast.Name, fn: Any, cls: Any, depth: int) -> frozenset | None:
        if node.id in ("True", "False", "None"):
            return None
        values = None
        if fn is not None:
            values = self.local_assigns(fn).get(node.id)
        if values is None:
            values = self.module_assigns().get(node.id)
            fn = None
        if not values:
            return None
        key = id(node)
        if key in self._stack:
            return None
        self._stack.add(key)
        try:
            return _join([self.eval(v, fn, cls, depth) if v is not None else None for v in values])
        finally:
            self._stack.discard(key)

    def _e_Attribute(self, node: ast.Attribute, fn: Any, cls: Any, depth: int) -> frozenset | None:
        qual = self.ctx.q(node) or ""
        if qual in ATTR_FACTS:
            value, fact = ATTR_FACTS[qual]
            self._fact(fact)
            return _atoms(value)
        if node.attr in ("is_cuda",):
            self._fact("no tensor is on CUDA on a Mac")
            return _atoms(False)
        if node.attr == "device" and isinstance(node.value, (ast.Name, ast.Call)) and \
                not (isinstance(node.value, ast.Name) and node.value.id in ("self", "args")):
            base = self.eval(node.value, fn, cls, depth)
            if base is not None and all(isinstance(a, Built) for a in base):
                return frozenset(a.device for a in base)
        if node.attr == "device" and not (isinstance(node.value, ast.Name) and node.value.id in _SETTINGS):
            self._fact("a tensor's device on a Mac is mps or cpu")
            return frozenset(("mps", "cpu"))
        if node.attr == "type":
            inner = self.eval(node.value, fn, cls, depth)
            if inner is not None and all(isinstance(a, str) for a in inner):
                return frozenset(_device_type(a) for a in inner)
            return None
        base = node.value
        if isinstance(base, ast.Name) and base.id == "self" and cls is not None:
            values = self.self_attrs(cls).get(node.attr)
            if not values:
                return None
            key = id(node)
            if key in self._stack:
                return None
            self._stack.add(key)
            try:
                init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
                return _join([self.eval(v, init, cls, depth) for v in values])
            finally:
                self._stack.discard(key)
        if isinstance(base, (ast.Name, ast.Attribute)):
            opt = self.options().get(node.attr)
            if opt is not None and opt[0] is not None:
                if opt[1]:
                    self._fact(opt[1])
                    if not opt[1].endswith("(the proposed flag)"):
                        self.used_default = True
                return opt[0]
        return None

    def _e_UnaryOp(self, node: ast.UnaryOp, fn: Any, cls: Any, depth: int) -> frozenset | None:
        if isinstance(node.op, ast.Not):
            inner = self.eval(node.operand, fn, cls, depth)
            return None if inner is None else frozenset(not a for a in inner)
        return None

    def _e_BoolOp(self, node: ast.BoolOp, fn: Any, cls: Any, depth: int) -> frozenset | None:
        # Python's value semantics: `a or b` is a when a is truthy, else b; `a and b` the other way round
        is_and = isinstance(node.op, ast.And)
        results: set = set()
        for i, part in enumerate(node.values):
            value = self.eval(part, fn, cls, depth)
            if value is None:
                if is_and and any((v := self.eval(p, fn, cls, depth)) is not None and not any(v)
                                  for p in node.values[i + 1:]):
                    return _atoms(False)  # `unknown and False` is falsy whatever the unknown is
                return None
            stops = {a for a in value if bool(a) != is_and}
            results |= stops
            if len(stops) == len(value):  # every value ends the chain here
                return frozenset(results) if len(results) <= MAX_ATOMS else None
            last = value - stops
        results |= last
        return frozenset(results) if len(results) <= MAX_ATOMS else None

    def _e_IfExp(self, node: ast.IfExp, fn: Any, cls: Any, depth: int) -> frozenset | None:
        test = self.eval(node.test, fn, cls, depth)
        if test is not None:
            truths = {bool(a) for a in test}
            if truths == {True}:
                return self.eval(node.body, fn, cls, depth)
            if truths == {False}:
                return self.eval(node.orelse, fn, cls, depth)
        return _join([self.eval(node.body, fn, cls, depth), self.eval(node.orelse, fn, cls, depth)])

    def _e_Compare(self, node: ast.Compare, fn: Any, cls: Any, depth: int) -> frozenset | None:
        if len(node.ops) != 1:
            return None
        if isinstance(node.ops[0], (ast.In, ast.NotIn)) and (self.ctx.q(node.comparators[0]) or "") == "os.environ" \
                and isinstance(node.left, ast.Constant):
            name = node.left.value
            if name in LAUNCHER_VARS:
                self._fact(f"{name} is unset (one process, no launcher)")
                return _atoms(isinstance(node.ops[0], ast.NotIn))
            self.undecided.append(f"environment variable {name}")
            return None
        left = self.eval(node.left, fn, cls, depth)
        right = self.eval(node.comparators[0], fn, cls, depth)
        if left is None or right is None:
            return None
        op = node.ops[0]
        out = set()
        for a in left:
            for b in right:
                r = _compare(op, a, b)
                if r is None:
                    return None
                out.add(r)
        return frozenset(out)

    def _e_Call(self, node: ast.Call, fn: Any, cls: Any, depth: int) -> frozenset | None:
        func = node.func
        qual = self.ctx.q(func) or ""
        if qual in FACTS:
            value, fact = FACTS[qual]
            self._fact(fact)
            return _atoms(value)
        if qual.startswith(("accelerate.", "transformers.")):
            chosen = choosers().get(qual)
            if chosen is not None:
                self._fact(f"{qual.split('.')[-1]} picks {chosen} on a Mac (data/device_choosers.yaml)")
                return _atoms(Built(qual, chosen))
            return None
        if qual in _ENV_READS or qual.startswith("os.environ"):
            name = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else "?"
            if name in LAUNCHER_VARS and qual in ("os.environ.get", "os.getenv"):
                self._fact(f"{name} is unset (one process, no launcher)")
                return self.eval(node.args[1], fn, cls, depth) if len(node.args) > 1 else _atoms(None)
            self.undecided.append(f"environment variable {name}")
            return None
        if qual == "int" and len(node.args) == 1:
            inner = self.eval(node.args[0], fn, cls, depth)
            if inner is not None and all(type(a) is int or (isinstance(a, str) and a.isdigit()) for a in inner):
                return frozenset(int(a) for a in inner)
            return None
        if qual in ("torch.device", "str") and node.args:
            return self.eval(node.args[0], fn, cls, depth)
        if qual == "hasattr" and len(node.args) == 2:
            target = self.ctx.q(node.args[0]) or ""
            attr = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
            if target == "torch.backends" and attr == "mps":
                self._fact("torch.backends.mps exists")
                return _atoms(True)
            return None
        if isinstance(func, ast.Attribute):
            if func.attr in _STR_METHODS and not node.args:
                inner = self.eval(func.value, fn, cls, depth)
                if inner is not None and all(isinstance(a, str) for a in inner):
                    return frozenset(getattr(a, func.attr)() for a in inner)
                return None
            if func.attr in ("startswith", "endswith") and len(node.args) == 1:
                inner = self.eval(func.value, fn, cls, depth)
                arg = self.eval(node.args[0], fn, cls, depth)
                if inner is None or arg is None:
                    return None
                out = set()
                for a in inner:
                    for b in arg:
                        if not isinstance(a, str) or not isinstance(b, (str, tuple)):
                            return None
                        if func.attr == "endswith" and a.endswith("*"):
                            return None
                        out.add(getattr(a.rstrip("*"), func.attr)(b) if func.attr == "startswith" else a.endswith(b))
                return frozenset(out)
            if isinstance(func.value, ast.Name) and func.value.id == "self" and cls is not None:
                target = next((s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                               and s.name == func.attr), None)
                if target is not None:
                    return self.returns(target, cls, depth + 1)
            return None
        if isinstance(func, ast.Name):
            target = self.defs().get(func.id)
            if target is not None and (fn is None or func.id not in self.local_assigns(fn)):
                return self.returns(target, None, depth + 1)
        return None

    # ---------------------------------------------------------------- returns of project functions
    def returns(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, cls: Any, depth: int) -> frozenset | None:
        if depth > MAX_DEPTH or id(fn) in self._stack:
            return None
        self._stack.add(id(fn))
        try:
            found: list[frozenset | None] = []
            self._run(fn.body, fn, cls, depth, found)
            if not found:
                return None
            value = _join(found)
            if value is not None:
                shown = ", ".join(repr(a) for a in sorted(value, key=repr))
                self._fact(f"{fn.name}() returns {shown} (line {fn.lineno})")
            return value
        finally:
            self._stack.discard(id(fn))

    def _run(self, body: list[ast.stmt], fn: Any, cls: Any, depth: int, found: list) -> bool:
        """Collect the return values a Mac can reach in ``body``; True when the block always returns."""
        for stmt in body:
            if isinstance(stmt, ast.Return):
                found.append(self.eval(stmt.value, fn, cls, depth) if stmt.value is not None else _atoms(None))
                return True
            if isinstance(stmt, ast.Raise):
                return True
            if isinstance(stmt, ast.If):
                test = self.eval(stmt.test, fn, cls, depth)
                truths = {bool(a) for a in test} if test is not None else {True, False}
                ends = []
                if True in truths:
                    ends.append(self._run(stmt.body, fn, cls, depth, found))
                if False in truths:
                    ends.append(self._run(stmt.orelse, fn, cls, depth, found))
                if ends and all(ends):
                    return True
            elif isinstance(stmt, (ast.Try, ast.With, ast.For, ast.While, ast.AsyncFor, ast.AsyncWith)):
                for part in ("body", "orelse", "finalbody"):
                    self._run(getattr(stmt, part, []) or [], fn, cls, depth, found)
                for h in getattr(stmt, "handlers", ()):
                    self._run(h.body, fn, cls, depth, found)
        return False


def _compare(op: ast.cmpop, a: Any, b: Any) -> bool | None:
    """One comparison of two atoms; None when a run-time string (``"cuda:*"``) leaves it open."""
    star = (isinstance(a, str) and a.endswith("*")) or (isinstance(b, str) and b.endswith("*"))
    if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
        if star:
            pa, pb = str(a).rstrip("*"), str(b).rstrip("*")
            if not (pa.startswith(pb) or pb.startswith(pa)):
                equal = False
            else:
                return None
        else:
            equal = a == b if isinstance(op, (ast.Eq, ast.NotEq)) else a is b or (a == b and a is None)
        return equal if isinstance(op, (ast.Eq, ast.Is)) else not equal
    if isinstance(op, (ast.In, ast.NotIn)):
        if isinstance(b, tuple):
            if star:
                return None
            inside = a in b
        elif isinstance(b, str) and isinstance(a, str):
            if a.endswith("*"):
                return None
            if b.endswith("*"):
                if a in b.rstrip("*"):
                    inside = True
                else:
                    return None
            else:
                inside = a in b
        else:
            return None
        return inside if isinstance(op, ast.In) else not inside
    if isinstance(op, (ast.Gt, ast.GtE, ast.Lt, ast.LtE)) and type(a) is int and type(b) is int:
        return {ast.Gt: a > b, ast.GtE: a >= b, ast.Lt: a < b, ast.LtE: a <= b}[op.__class__]
    return None


def skipped_imports(ctx: Any, tree: ast.Module, checked: dict[str, list]) -> dict[str, str]:
    """Import line -> why a Mac running the project's defaults never executes it: an import in a branch whose test
    the Mac's facts or an option's default decide against (``if args.fp8:`` with ``--fp8`` off by default, ``if
    torch.cuda.is_available():``, the rest of a function after ``if not torch.cuda.is_available(): return``).
    The main path does not follow such imports (:func:`mpsready.scan.model.graph._reach`). ``ctx`` is the file's
    context after its visit (its aliases complete). An import under an ``if`` whose test names the imported
    package as a string (an availability check) goes to ``checked`` (line -> [test, test line])."""
    mac = MacEval(ctx)
    out: dict[str, str] = {}
    branches: list[tuple[ast.expr, bool, Any, Any]] = []

    def decide(line: int, stmt: ast.Import | ast.ImportFrom) -> None:
        names = {stmt.module.split(".")[0]} if isinstance(stmt, ast.ImportFrom) and stmt.module else {
            a.name.split(".")[0] for a in stmt.names}
        for test, want, _fn, _cls in reversed(branches):
            if want and any(n.__class__ is ast.Constant and n.value in names for n in ast.walk(test)):  # type: ignore[attr-defined]
                # `if is_package_available("flash_attn"): from flash_attn import ...`: runs only where installed
                checked[str(line)] = [ast.unparse(test)[:80], test.lineno]
                break
        for test, want, fn, cls in branches:
            truth = mac.truth(test, fn, cls)
            if truth is not None and truth != want:
                facts = "; ".join(mac.facts)
                out[str(line)] = f"{ast.unparse(test)[:80]} is {truth} (line {test.lineno})" + (
                    f": {facts}" if facts else "")
                return

    def block(body: list[ast.stmt], fn: Any, cls: Any) -> None:
        exits = 0
        for stmt in body:
            kind = stmt.__class__
            if kind in (ast.Import, ast.ImportFrom):
                if branches:
                    decide(stmt.lineno, stmt)  # type: ignore[arg-type]
            elif kind is ast.If:
                branches.append((stmt.test, True, fn, cls))  # type: ignore[attr-defined]
                block(stmt.body, fn, cls)  # type: ignore[attr-defined]
                branches[-1] = (stmt.test, False, fn, cls)  # type: ignore[attr-defined]
                block(stmt.orelse, fn, cls)  # type: ignore[attr-defined]
                branches.pop()
                if fn is not None and not stmt.orelse and stmt.body and \
                        stmt.body[-1].__class__ in (ast.Return, ast.Raise):  # type: ignore[attr-defined]
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

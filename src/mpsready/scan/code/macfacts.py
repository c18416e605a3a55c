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
Issue 32, round 4: transformers' flash-attn availability helpers are False (:data:`FACTS`); a device variable whose
value is not followed (:data:`_DEVICE_VARS`: a parameter, a loop over the chosen devices) has ``.type`` ``"mps"`` or
``"cpu"``; ``any``/``all`` over an element test decided for every element take that answer; a settings mapping's
``.get("switch", False)`` holds its boolean default (an option's default: ``used_default``). Round 11: a device
parameter's own value (:func:`_device_param`) is ``"mps"`` or ``"cpu"`` too where it is compared with a CUDA device
string, so ``if device == "cuda":`` and ``"cuda" in device`` on it are decided (``device is None`` is not).

**Names.** A name's value is the join of every value assigned to it in the enclosing function (then in the module
body: flow-insensitive, ``if``/``try``/``with``/``for`` bodies included), a function's parameter is unknown, and
``self.X`` joins what the methods of the enclosing class assign to ``self.X`` (``__init__`` and the others).
A call of a function defined in the same file (or of a method of the enclosing class through ``self.``) is the
join of the ``return`` values its body can reach, its branches decided by the same facts (``if
torch.cuda.is_available(): return "cuda"`` is skipped, a following ``if torch.backends.mps.is_available():
return "mps"`` ends the search), up to :data:`MAX_DEPTH` calls deep.

**Limits.** One file at a time (a helper imported from another module is unknown), no loop or exception
semantics (a loop body counts as run once or more), containers and keyword arguments are not followed,
other ``os.environ`` / ``os.getenv`` values are unknown and named (:attr:`MacEval.undecided`) unless compared
with a literal (round 12: the default, an option's default, :mod:`mpsready.scan.code.macenv_vars`), and an unknown value
decides nothing: the analysis only ever removes limits that a Mac provably never reaches.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpsready.scan.code.macenv import GPU_IDS, MacEnv, atoms, compare
from mpsready.scan.code.macenv_vars import env_default, literal_side

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
# issue 32, round 4: the Hugging Face availability helpers of flash-attn answer False on a Mac: flash-attn has no
# macOS build (scan/data/packages.yaml: no_macos_build), and transformers' helpers also require CUDA
# (transformers/utils/import_utils.py, 4.34.0 `is_flash_attn_available`: `_flash_attn_available and
# torch.cuda.is_available()`; 4.36.0+ `is_flash_attn_2_available`: False unless `torch.cuda.is_available()`)
for _mod in ("transformers.utils", "transformers.utils.import_utils", "transformers"):
    for _fn in ("is_flash_attn_available", "is_flash_attn_2_available", "is_flash_attn_3_available",
                "is_flash_attn_greater_or_equal_2_10"):
        FACTS[f"{_mod}.{_fn}"] = (False, f"{_fn}() is False (flash-attn has no macOS build)")
del _mod, _fn
ATTR_FACTS: dict[str, tuple[Any, str]] = {
    "sys.platform": ("darwin", "sys.platform is 'darwin'"),
    "torch.version.cuda": (None, "torch.version.cuda is None (a macOS wheel)"),
}
def _settings_root(node: ast.expr) -> bool:
    """Whether ``node`` is a settings object by its root name (``self.h``, ``cfg``, ``config.model``): ``self``
    followed by an attribute, or one of :data:`_SETTINGS`."""
    chain = 0
    while node.__class__ is ast.Attribute:
        node = node.value  # type: ignore[attr-defined]
        chain += 1
    return node.__class__ is ast.Name and (node.id in _SETTINGS and (node.id != "self" or chain > 0))  # type: ignore[attr-defined]


# names that hold a torch.device (their `.type` is read): `device.type == "cuda"` (issue 32, round 4)
_DEVICE_VARS = frozenset(("device", "dev", "target_device", "compute_device", "run_device", "torch_device"))
_STR_METHODS = ("lower", "upper", "strip", "casefold")
_ENV_READS = ("os.environ.get", "os.getenv")
# variables a multi-process launcher (torchrun, torch.distributed.launch, SLURM) sets: absent when a Mac runs the
# main command as one process (torch/distributed/run.py sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR/PORT)
LAUNCHER_VARS = frozenset(("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                           "SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_RANK"))
# names that usually hold settings, not tensors or modules: their `.device` is a configured value
_SETTINGS = frozenset(("self", "args", "opt", "opts", "cfg", "config", "conf", "hparams", "hp", "params",
                       "options", "settings", "flags", "FLAGS", "training_args", "train_args", "kwargs"))


_MAC_DEVICES = frozenset(("mps", "cpu"))


def _device_param(fn: Any, name: str) -> frozenset | None:
    """Issue 32, round 11: compared with a CUDA device string, a device parameter (:data:`_DEVICE_VARS`) holds the
    device a Mac program runs on, ``mps`` or ``cpu``, as its ``.type`` does (round 4): a CUDA value passed to it, or its
    own CUDA default, is reported where it is written (API103), so ``if device == "cuda":`` and ``"cuda" in device`` in
    its function are decided (a Mac never enters them). Only there (``MacEval._cuda_side``): ``if device is None:``
    stays open, since a caller may pass None for "choose for me". Only the parameter's own value: other assignments to
    the name in the function join as they are."""
    if name.lower() not in _DEVICE_VARS or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    args = fn.args
    if any(a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)):
        return _MAC_DEVICES
    return None


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


def _join(values: list[frozenset | None]) -> frozenset | None:
    out: set = set()
    for v in values:
        if v is None:
            return None
        out |= v
    return frozenset(out) if out and len(out) <= MAX_ATOMS else None


def _device_type(atom: Any) -> Any:
    return atom.split(":")[0] if isinstance(atom, str) else atom


class MacEval(MacEnv):
    """Evaluates expressions of one file under the Mac's facts. ``ctx`` is the file's
    :class:`~mpsready.scan.code.context.FileContext` (aliases, enclosing functions and classes, the tree)."""

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.facts: list[str] = []  # the facts the last decision used, in order, each once
        self.undecided: list[str] = []  # what an unknown value came from (an environment variable)
        self._stack: set[int] = set()
        self.bindings: dict[str, frozenset | None] = {}  # parameter -> the values every caller passes (call_sites)
        self._env_cmp = False  # evaluating the sides of a comparison with a literal (round 12, macenv_vars.py)
        self._cuda_side = False  # evaluating the side of a comparison with a CUDA device string (round 11)
        # a call of a function this file imports from the project -> (its return values on a Mac, the facts used);
        # set by the project passes that read several files (model/helper_returns.py, issue 32 round 9)
        self.resolve: Any = None
        # (test, function, class) ids -> (answer, facts, undecided, used_default): one evaluation per test
        self._truths: dict[tuple[int, int, int], tuple[bool | None, tuple, tuple, bool]] = {}

    # ---------------------------------------------------------------- decisions
    def truth(self, test: ast.expr, fn: ast.AST | None, cls: ast.ClassDef | None) -> bool | None:
        """True or False when every value ``test`` can take on a Mac has that truth value, else None. Answers are
        kept per test (the file's tree lives as long as this evaluator), unless parameter bindings are set."""
        key = (id(test), id(fn), id(cls))
        if not self.bindings:
            hit = self._truths.get(key)
            if hit is not None:
                answer, facts, undecided, used = hit
                self.facts, self.undecided, self.used_default = list(facts), list(undecided), used
                return answer
        answer = self._truth(test, fn, cls)
        if not self.bindings:
            self._truths[key] = (answer, tuple(self.facts), tuple(self.undecided), self.used_default)
        return answer

    def _truth(self, test: ast.expr, fn: ast.AST | None, cls: ast.ClassDef | None) -> bool | None:
        self.facts = []
        self.undecided = []
        self.used_default = False
        try:
            value = self.eval(test, fn, cls, 0)
        except RecursionError:  # an expression nested past Python's stack: undecided, never an internal error
            return None
        if value is None:
            return None
        truths = {bool(a) for a in value}
        return truths.pop() if len(truths) == 1 else None

    def _fact(self, text: str) -> None:
        if text not in self.facts:
            self.facts.append(text)

    # ---------------------------------------------------------------- evaluation
    def eval(self, node: ast.expr | None, fn: Any, cls: Any, depth: int) -> frozenset | None:
        if node is None:
            return None
        method = getattr(self, "_e_" + node.__class__.__name__, None)
        return method(node, fn, cls, depth) if method is not None else None

    def _e_Constant(self, node: ast.Constant, fn: Any, cls: Any, depth: int) -> frozenset | None:
        return atoms(node.value)

    def _e_Tuple(self, node: ast.Tuple, fn: Any, cls: Any, depth: int) -> frozenset | None:
        if all(isinstance(e, ast.Constant) for e in node.elts):
            return atoms(tuple(e.value for e in node.elts))  # type: ignore[attr-defined]
        return None

    _e_List = _e_Set = _e_Tuple

    def _e_JoinedStr(self, node: ast.JoinedStr, fn: Any, cls: Any, depth: int) -> frozenset | None:
        head = node.values[0] if node.values else None
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            return atoms(head.value + ("*" if len(node.values) > 1 else ""))
        return None

    def _e_BinOp(self, node: ast.BinOp, fn: Any, cls: Any, depth: int) -> frozenset | None:
        if isinstance(node.op, (ast.Add, ast.Mod)):
            left = self.eval(node.left, fn, cls, depth)
            if left is not None and all(isinstance(a, str) for a in left):
                return frozenset(a.split("%")[0] + "*" for a in left)
        return None

    def _e_Name(self, node: ast.Name, fn: Any, cls: Any, depth: int) -> frozenset | None:
        if node.id in self.bindings:
            return self.bindings[node.id]
        values = None
        param = None
        if fn is not None:
            values = self.local_assigns(fn).get(node.id)
            param = _device_param(fn, node.id) if self._cuda_side and values is not None and values.count(None) == 1 \
                else None
            if param is not None:
                self._fact(f"a device a Mac program holds is mps or cpu (parameter {node.id})")
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
            return _join([self.eval(v, fn, cls, depth) if v is not None else param for v in values])
        finally:
            self._stack.discard(key)

    def _e_Attribute(self, node: ast.Attribute, fn: Any, cls: Any, depth: int) -> frozenset | None:
        qual = self.ctx.q(node) or ""
        if qual in ATTR_FACTS:
            value, fact = ATTR_FACTS[qual]
            self._fact(fact)
            return atoms(value)
        if node.attr in ("is_cuda",):
            self._fact("no tensor is on CUDA on a Mac")
            return atoms(False)
        # issue 32, round 8: a name bound to an argparse parse result, whatever it is called, holds the options;
        # a settings-like name bound only to something else holds none of them
        parsed = self.parse_result(node.value.id, fn) if isinstance(node.value, ast.Name) else None
        if node.attr == "device" and isinstance(node.value, (ast.Name, ast.Call)) and not parsed and \
                not (isinstance(node.value, ast.Name) and node.value.id in ("self", "args")):
            built = self.eval(node.value, fn, cls, depth)
            if built is not None and all(isinstance(a, Built) for a in built):
                return frozenset(a.device for a in built)
        if node.attr == "device" and not parsed and \
                not (isinstance(node.value, ast.Name) and node.value.id in _SETTINGS):
            self._fact("a tensor's device on a Mac is mps or cpu")
            return frozenset(("mps", "cpu"))
        if node.attr == "type":
            inner = self.eval(node.value, fn, cls, depth)
            if inner is not None and all(isinstance(a, str) for a in inner):
                return frozenset(_device_type(a) for a in inner)
            if inner is None and isinstance(node.value, ast.Name) and node.value.id not in _SETTINGS \
                    and node.value.id.lower() in _DEVICE_VARS:
                # issue 32, round 4: a device whose value the evaluation cannot follow (a parameter, a loop over
                # the devices chosen) is the program's own device: mps or cpu on a Mac; a CUDA device would have
                # come from a CUDA value, which is reported where it is written
                self._fact("a device a Mac program holds is mps or cpu")
                return frozenset(("mps", "cpu"))
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
        if isinstance(base, (ast.Name, ast.Attribute)) and parsed is not False:
            opt = self.options().get(node.attr)
            if opt is not None and opt[0] is not None:
                if opt[1]:
                    self._fact(opt[1])
                    if not opt[1].endswith(("(the proposed flag)", GPU_IDS)):
                        self.used_default = True
                return opt[0]
        return None

    def _e_Subscript(self, node: ast.Subscript, fn: Any, cls: Any, depth: int) -> frozenset | None:
        """``args.device[0]`` (issue 32, round 5): a constant index into tuple atoms (a list default of an option,
        a constant list) is the element at that index in each; any index out of range or unknown: unknown."""
        index = node.slice
        if not (isinstance(index, ast.Constant) and type(index.value) is int):
            return None
        seq = self.eval(node.value, fn, cls, depth)
        if seq is None or not all(isinstance(a, tuple) and -len(a) <= index.value < len(a) for a in seq):
            return None
        return frozenset(a[index.value] for a in seq)

    def _e_UnaryOp(self, node: ast.UnaryOp, fn: Any, cls: Any, depth: int) -> frozenset | None:
        if isinstance(node.op, ast.Not):
            inner = self.eval(node.operand, fn, cls, depth)
            return None if inner is None else frozenset(not a for a in inner)
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):  # `-1` (issue 32, round 5)
            number = node.operand.value
            if isinstance(number, (int, float)) and not isinstance(number, bool):
                return atoms(-number)
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
                    return atoms(False)  # `unknown and False` is falsy whatever the unknown is
                if not is_and and any((v := self.eval(p, fn, cls, depth)) is not None and all(a is True for a in v)
                                      for p in node.values[i + 1:]):
                    # `unknown or <a test the Mac decides true>` is truthy whatever the unknown is (round 6); only a
                    # boolean test: `args.device or "cuda"` stays unknown (its value, not its truth, is used)
                    return atoms(True)
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
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            name = node.left.value
            if name in LAUNCHER_VARS:
                self._fact(f"{name} is unset (one process, no launcher)")
                return atoms(isinstance(node.ops[0], ast.NotIn))
            self.undecided.append(f"environment variable {name}")
            return None
        # round 12: an environment variable compared with a literal holds its default (unset: None), like an option
        self._env_cmp = literal_side(node)
        try:
            left = self.eval(node.left, fn, cls, depth)
            right = self.eval(node.comparators[0], fn, cls, depth)
        finally:
            self._env_cmp = False
        if (left is None) != (right is None) and all(isinstance(a, str) and a.startswith("cuda")
                                                     for a in (left or right or ())):
            # round 11: compared with a CUDA device string, an open device parameter is the Mac's device
            # (:func:`_device_param`); any other test on it (`device is None`) stays open
            self._cuda_side = True
            try:
                if left is None:
                    left = self.eval(node.left, fn, cls, depth)
                else:
                    right = self.eval(node.comparators[0], fn, cls, depth)
            finally:
                self._cuda_side = False
        if left is None or right is None:
            return None
        op = node.ops[0]
        out = set()
        for a in left:
            for b in right:
                r = compare(op, a, b)
                if r is None:
                    return None
                out.add(r)
        return frozenset(out)

    def _any_all(self, node: ast.Call, fn: Any, cls: Any, depth: int) -> frozenset | None:
        """`all(d.type == "cuda" for d in devices)` (issue 32, round 4): an element test the facts decide for every
        element decides both (over the program's own devices, never none: `all` of none is not followed)."""
        if len(node.args) != 1 or node.args[0].__class__ not in (ast.GeneratorExp, ast.ListComp):
            return None
        gen = node.args[0]
        if len(gen.generators) != 1 or gen.generators[0].ifs:  # type: ignore[attr-defined]
            return None
        element = self.eval(gen.elt, fn, cls, depth + 1)  # type: ignore[attr-defined]
        if element is not None and len(element) == 1 and next(iter(element)).__class__ is bool:
            return element
        return None

    def _settings_get(self, node: ast.Call) -> frozenset | None:
        """`self.h.get("use_cuda_kernel", False)` (issue 32, round 4): a feature switch read from a settings mapping
        holds its default at the defaults, like an option (the user may turn it on: `behind_flag`, not a fact)."""
        func = node.func
        if len(node.args) != 2 or node.keywords or node.args[0].__class__ is not ast.Constant \
                or node.args[1].__class__ is not ast.Constant or not isinstance(node.args[1].value, bool) \
                or not _settings_root(func.value):  # type: ignore[attr-defined]
            return None
        key, default = node.args[0].value, node.args[1].value  # type: ignore[attr-defined]
        self._fact(f"{ast.unparse(func.value)[:40]}.get({key!r}) holds its default {default!r}")  # type: ignore[attr-defined]
        self.used_default = True
        return atoms(default)

    def _env_read(self, node: ast.Call, qual: str, fn: Any, cls: Any, depth: int) -> frozenset | None:
        """An environment variable's value: a launcher's variable is unset (a fact), one compared with a literal holds
        its default (round 12, :mod:`mpsready.scan.code.macenv_vars`), any other is unknown and named."""
        first = node.args[0] if node.args else None
        name = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else "?"
        if name in LAUNCHER_VARS and qual in ("os.environ.get", "os.getenv"):
            self._fact(f"{name} is unset (one process, no launcher)")
            return self.eval(node.args[1], fn, cls, depth) if len(node.args) > 1 else atoms(None)
        if self._env_cmp and qual in _ENV_READS:
            default = env_default(node)
            if default is not None:
                self._fact(f"environment variable {name} holds its default {default[0]!r} (a user may set it)")
                self.used_default = True
                self.undecided.append(f"environment variable {name}")  # a user may set it: say what it gives
                return atoms(default[0])
        self.undecided.append(f"environment variable {name}")
        return None

    def _e_Call(self, node: ast.Call, fn: Any, cls: Any, depth: int) -> frozenset | None:
        func = node.func
        if func.__class__ is ast.Name and func.id in ("any", "all"):
            return self._any_all(node, fn, cls, depth)
        if func.__class__ is ast.Attribute and func.attr == "get":  # type: ignore[attr-defined]
            got = self._settings_get(node)
            if got is not None:
                return got
        qual = self.ctx.q(func) or ""
        if qual in FACTS:
            value, fact = FACTS[qual]
            self._fact(fact)
            return atoms(value)
        if qual.startswith(("accelerate.", "transformers.")):
            chosen = choosers().get(qual)
            if chosen is not None:
                self._fact(f"{qual.split('.')[-1]} picks {chosen} on a Mac (data/device_choosers.yaml)")
                return atoms(Built(qual, chosen))
            return None
        if qual in _ENV_READS or qual.startswith("os.environ"):
            return self._env_read(node, qual, fn, cls, depth)
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
                return atoms(True)
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
            if target is None and self.resolve is not None and depth < MAX_DEPTH and not node.args \
                    and not node.keywords and (fn is None or func.id not in self.local_assigns(fn)):
                got = self.resolve(func.id, depth + 1)  # an imported project helper called without arguments
                if got is not None:
                    for fact in got[1]:
                        self._fact(fact)
                    return got[0]
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
                found.append(self.eval(stmt.value, fn, cls, depth) if stmt.value is not None else atoms(None))
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

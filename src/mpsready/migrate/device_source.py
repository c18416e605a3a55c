"""Which device a rewritten CUDA move or literal takes: never one the surrounding code does not use.

A ``.cuda()`` rewritten to an independent choice can mix devices: the migrated layer moves its mask to MPS
while the project's own selection (left as it was, or forced to the CPU by ``--no-cuda``) keeps the model and
its input on the CPU, and the first MPS kernel then refuses the CPU operand ("Expected all tensors to be on the
same device", see ``docs/emulation.md``, placement). So :func:`resolve` answers, in this order:

1. the device the code already holds: a ``device`` parameter of the enclosing function, ``device`` bound to a
   device expression earlier in that function or at module level, or ``self.device`` assigned in the class's
   ``__init__``;
2. inside a method of a ``Module`` or autograd ``Function`` subclass, the device of the first parameter the
   method uses as a tensor (``x.shape``, ``x.size()``, ``x.device``...): a module computes on the device of
   its inputs (``DataParallel`` replicas and DDP ranks included: the original ``.cuda()`` went to the current
   CUDA device, which they set to the input's);
3. the helper ``_mpsready_device()`` (CUDA, then MPS, then the CPU), but only in a project that has no device
   selection of its own (no API104 finding anywhere): there every choice is the helper's, so all agree. In a
   project that selects its device itself, code that cannot see that selection is left for a person, with
   the selection's place in the reason.

An explicit CUDA index (``.cuda(1)``, ``"cuda:1"``) keeps step 3's helper (it keeps the index on CUDA) under the
same condition.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from mpsready.migrate.common import device_in_scope, helper_call
from mpsready.migrate.interface import FileContext

# attribute uses that only a tensor has among the values research code passes to a module's methods
TENSOR_ATTRS = frozenset({
    "shape", "size", "device", "dtype", "dim", "ndim", "numel", "view", "reshape", "is_cuda", "new_zeros",
    "new_ones", "new_empty", "new_full", "new_tensor", "permute", "transpose", "unsqueeze", "squeeze",
    "contiguous", "type_as", "expand", "masked_fill", "float", "half", "bfloat16", "detach", "softmax",
})


@dataclass(frozen=True)
class Target:
    """A device expression to write (``expr``), how the plan shows it, and whether it is the helper."""

    expr: cst.BaseExpression
    shown: str
    helper: bool


def _class_of(ctx: FileContext, fn: cst.FunctionDef) -> cst.ClassDef | None:
    parent = ctx.parents.get(fn)
    block = ctx.parents.get(parent) if isinstance(parent, cst.IndentedBlock) else None
    return block if isinstance(block, cst.ClassDef) else None


def _base_names(cls: cst.ClassDef) -> list[str]:
    out = []
    for b in cls.bases:
        name = cst.helpers.get_full_name_for_node(b.value) or ""
        out.append(name.rsplit(".", 1)[-1])
    return out


def _is_module_class(cls: cst.ClassDef) -> bool:
    """A subclass of ``nn.Module`` (any base whose name ends in ``Module``) or of ``autograd.Function``."""
    return any(b.endswith("Module") or b == "Function" for b in _base_names(cls))


def _enclosing_function(ctx: FileContext, node: cst.CSTNode) -> cst.FunctionDef | None:
    return next((a for a in ctx.ancestors(node) if isinstance(a, cst.FunctionDef)), None)


# The visitors are classes of the module, not of the functions that use them: a class made per call is garbage
# only the cyclic collector frees, and it would keep what its methods see alive until then.
class _SelfDeviceAssign(cst.CSTVisitor):
    """Sets ``found`` at an assignment to ``self.device``."""

    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Attribute) and isinstance(t.target.value, cst.Name) \
                    and t.target.value.value == "self" and t.target.attr.value == "device":
                self.found = True


class _TensorUses(cst.CSTVisitor):
    """``used``: the names whose tensor attributes (:data:`TENSOR_ATTRS`) are read."""

    def __init__(self) -> None:
        super().__init__()
        self.used: set[str] = set()

    def visit_Attribute(self, a: cst.Attribute) -> None:
        if isinstance(a.value, cst.Name) and a.attr.value in TENSOR_ATTRS:
            self.used.add(a.value.value)


def _self_device(ctx: FileContext, cls: cst.ClassDef) -> bool:
    """Whether ``__init__`` assigns ``self.device``."""
    init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    if init is None:
        return False
    v = _SelfDeviceAssign()
    ctx.visit(init, v)
    return v.found


def tensor_parameter(ctx: FileContext, node: cst.CSTNode) -> str | None:
    """The first parameter of the enclosing method (of a Module or Function subclass) that the method uses as a
    tensor, or ``None``. ``self``/``ctx``/``cls`` are not candidates."""
    fn = _enclosing_function(ctx, node)
    cls = _class_of(ctx, fn) if fn is not None else None
    if fn is None or cls is None or not _is_module_class(cls):
        return None
    params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)][1:]
    v = _TensorUses()
    ctx.visit(fn.body, v)
    return next((p for p in params if p in v.used), None)


def self_device(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` sits in a method whose class's ``__init__`` assigns ``self.device``."""
    fn = _enclosing_function(ctx, node)
    cls = _class_of(ctx, fn) if fn is not None else None
    return cls is not None and fn.name.value != "__init__" and _self_device(ctx, cls)  # type: ignore[union-attr]


# nn layers that hold parameters (PyTorch 2.13.0 torch/nn/modules: each creates ``Parameter``s in ``__init__``)
PARAMETER_LAYERS = frozenset({
    "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "Embedding",
    "EmbeddingBag", "LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell", "MultiheadAttention", "PReLU",
    "Parameter", "Transformer", "TransformerEncoderLayer", "TransformerDecoderLayer", "RMSNorm",
})
# torch functions that make a new tensor on the CPU unless told otherwise (torch/_torch_docs.py, 2.13.0)
FACTORIES = frozenset({
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace", "logspace",
    "eye", "tensor", "as_tensor", "from_numpy", "FloatTensor", "LongTensor", "Tensor", "bernoulli", "normal",
})


class _Layers(cst.CSTVisitor):
    """``found``: the class assigns ``self.X = <a call naming a parameter layer>`` or registers a parameter."""

    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        name = cst.helpers.get_full_name_for_node(node.func) or ""
        if name.rsplit(".", 1)[-1] in PARAMETER_LAYERS or name == "self.register_parameter":
            self.found = True


def own_parameters(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` sits in a method (not ``__init__``: the module is moved after it) of an ``nn.Module``
    subclass that builds a parameter layer or registers a parameter: there ``next(self.parameters()).device`` is
    where the module computes (``Module.to``/``.cuda()`` move every parameter; ``DataParallel`` replicas hold
    theirs on the replica's device)."""
    fn = _enclosing_function(ctx, node)
    cls = _class_of(ctx, fn) if fn is not None else None
    if fn is None or cls is None or fn.name.value == "__init__" \
            or not any(b.endswith("Module") for b in _base_names(cls)):
        return False
    key = ("own_parameters", id(cls))
    if key not in ctx.memo:
        v = _Layers()
        ctx.visit(cls.body, v)
        ctx.memo[key] = v.found
    return bool(ctx.memo[key])


class _Moved(cst.CSTVisitor):
    """``moved``: names a ``.cuda()`` or ``.to(...)`` call is made on (``x.cuda()``, ``x = x.to(dev)``)."""

    def __init__(self) -> None:
        super().__init__()
        self.moved: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and f.attr.value in ("cuda", "to") and isinstance(f.value, cst.Name):
            self.moved.add(f.value.value)


def _uses(ctx: FileContext, scope: cst.CSTNode) -> tuple[set[str], set[str]]:
    """(names ``scope`` uses as tensors, names it moves), once per scope and file."""
    key = ("tensor_uses", id(scope))
    if key not in ctx.memo:
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        used, moved = _TensorUses(), _Moved()
        ctx.visit(body, used)
        ctx.visit(body, moved)
        ctx.memo[key] = (used.used, moved.moved)
    return ctx.memo[key]


def neighbour_operand(ctx: FileContext, node: cst.CSTNode) -> str | None:
    """``y`` for ``x.cuda() * y`` (any binary operator or comparison): the other operand is a name the code
    around uses as a tensor and never moves, so on CUDA it already was on the device ``.cuda()`` chose (an
    operation mixing a CUDA and a CPU tensor raises there), and ``.to(y.device)`` keeps the two together on MPS."""
    parent = ctx.parents.get(node)
    if isinstance(parent, cst.BinaryOperation):
        others = [parent.right if parent.left is node else parent.left]
    elif isinstance(parent, cst.Comparison):
        others = [parent.left, *(c.comparator for c in parent.comparisons)]
    else:
        return None
    scope = _enclosing_function(ctx, node) or ctx.module
    used, moved = _uses(ctx, scope)
    receiver = node.func.value if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) else None
    for other in others:
        if other is node or not isinstance(other, cst.Name):
            continue
        name = other.value
        if name in used and name not in moved and not (isinstance(receiver, cst.Name) and receiver.value == name):
            return name
    return None


def fresh_tensor_parameter(ctx: FileContext, node: cst.CSTNode) -> str | None:
    """In a plain function, ``x`` for ``torch.zeros(...).cuda()`` when ``x`` is a parameter the function uses as a
    tensor and never moves: a tensor the function makes to combine with its inputs goes where they are. A function
    that moves a parameter (``batch.cuda()``) receives CPU data precisely to move it: not followed."""
    fn = _enclosing_function(ctx, node)
    if fn is None or not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return None
    made = node.func.value
    if not isinstance(made, cst.Call):
        return None
    name = cst.helpers.get_full_name_for_node(made.func) or ""
    if not (name.startswith(("torch.", "th.")) and name.rsplit(".", 1)[-1] in FACTORIES):
        return None
    used, moved = _uses(ctx, fn)
    params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)]
    return next((p for p in params if p not in ("self", "cls", "ctx") and p in used and p not in moved), None)


def resolve(ctx: FileContext, node: cst.CSTNode, index: cst.BaseExpression | str | None = None) -> Target | str:
    """The device for a CUDA move or literal at ``node`` (see the module docstring), or the reason it is left
    for a person. ``index`` is the explicit CUDA index of the original (``None``: the current CUDA device)."""
    if index is None:
        scoped = device_in_scope(ctx, node)
        if scoped:
            return Target(cst.Name(scoped), scoped, False)
        if self_device(ctx, node):
            return Target(cst.parse_expression("self.device"), "self.device", False)
        param = tensor_parameter(ctx, node) or neighbour_operand(ctx, node)
        if param:
            return Target(cst.parse_expression(f"{param}.device"), f"{param}.device", False)
        if own_parameters(ctx, node):
            shown = "next(self.parameters()).device"
            return Target(cst.parse_expression(shown), shown, False)
        param = fresh_tensor_parameter(ctx, node)
        if param:
            return Target(cst.parse_expression(f"{param}.device"), f"{param}.device", False)
    if ctx.selections:
        where = ", ".join(ctx.selections[:3]) + (" ..." if len(ctx.selections) > 3 else "")
        return (f"the project selects its device itself ({where}) and this code cannot see that choice: "
                f"{_missing(ctx, node, index)}; pass the selected device here (a parameter, or a tensor argument's "
                ".device); an independent choice could put this tensor on MPS while the rest stays on the CPU")
    shown = "_mpsready_device(...)" if index is not None else "_mpsready_device()"
    return Target(helper_call(index), shown, True)


def _missing(ctx: FileContext, node: cst.CSTNode, index: cst.BaseExpression | str | None) -> str:
    """Which device source was missing here, in the words of :func:`resolve`'s order."""
    if index is not None:
        return "it names a CUDA index, which only the project's selection can map"
    fn = _enclosing_function(ctx, node)
    cls = _class_of(ctx, fn) if fn is not None else None
    if fn is not None and cls is not None and fn.name.value == "__init__" and _is_module_class(cls):
        return ("a tensor made in a module's __init__ and kept as a plain attribute is not moved by the module's "
                ".to(device): register it with self.register_buffer(...) without .cuda()")
    where = "this function" if fn is not None else "module level"
    return (f"at {where} no device variable is in scope, no self.device, no tensor operand or tensor parameter "
            "whose .device it could follow, and no module parameters")

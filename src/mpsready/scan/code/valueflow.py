"""Value flow within one file: which names hold a NumPy float64 array, a CPU float64 tensor, a CPU tensor
made from NumPy, or the result of a project call, and the dtype questions the rule units ask about an expression.

:class:`ValueFlow` is the part of the per-file context (:class:`mpsready.scan.code.context.FileContext`) that
answers them; the tables are updated in source order as the visitor meets assignments
(:meth:`mpsready.scan.code.context.FileContext.track_assign`)."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import dotted, dtype_operands, kwarg, walk
from mpsready.scan.code.names import AliasMap

_NUMPY_F64_FACTORIES = {
    "numpy.random.rand", "numpy.random.randn", "numpy.random.random", "numpy.random.uniform", "numpy.random.normal",
    "numpy.random.random_sample", "numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "numpy.linspace",
    "numpy.eye", "numpy.identity", "numpy.loadtxt", "numpy.genfromtxt",
}
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
TORCH_FACTORIES = {f"torch.{f}" for f in (
    "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "tensor", "as_tensor", "rand", "randn",
    "randint", "eye", "normal")}
_F64_TORCH_NAMES = {"torch.float64", "torch.double"}
# torch functions whose result keeps a float64 argument's dtype, for names followed from a CPU float64 factory
# (PyTorch docs, "Tensor Attributes: Type Promotion", 2.13: float64 with Python scalars stays float64)
_TORCH_F64_KEEPERS = {f"torch.{f}" for f in ("cumprod", "cumsum", "sqrt", "log", "exp", "clip", "clamp", "cat", "stack",
                                              "flip", "abs", "sigmoid", "cos", "sin")}


class ValueFlow:
    """Import aliases and the value-flow tables of one file (see the module doc)."""

    def __init__(self, aliases: AliasMap, tree: ast.Module) -> None:
        self.aliases = aliases
        self.tree = tree
        # the module's source when the analyser has it (a bound for walks looking for a name: triggers.name_lines)
        self.text: str | None = None
        self.np_f64_vars: set[str] = set()  # names and attributes (``self.alphas``) bound to a NumPy float64 array
        self.torch_f64_vars: dict[str, int] = {}  # name -> line of a CPU float64 torch tensor bound to it
        self.cpu_f64_nodes: dict[int, str] = {}  # id() of float64 dtype names making a CPU tensor -> the factory
        self.moved_calls: set[int] = set()  # id() of calls whose result is moved to a device in the same chain
        self.default_device: bool | None = None  # whether the file sets a default device or tensor type
        self.cpu_vars: set[str] = set()  # names holding a CPU tensor made from NumPy (torch.from_numpy(a), x.cpu())
        self.call_vars: dict[str, str] = {}  # name -> short name of the project function whose result it holds

    def q(self, node: ast.AST) -> str | None:
        return self.aliases.qualname(node)


    def is_dtype(self, node: ast.AST) -> bool:
        name = self.q(node) or ""
        return name.startswith("torch.") and name.split(".")[-1] in (
            "float32", "float", "float16", "half", "bfloat16", "int64", "long", "int32", "int", "bool", "uint8",
            "float64", "double", "int8", "int16", "complex64")


    def is_cpu_tensor(self, value: ast.AST) -> bool:
        """A tensor that stays on the CPU: torch.from_numpy(...), torch.tensor/as_tensor without a device, x.cpu(),
        or a cast of one (`w.double()` where w is such a tensor)."""
        if not isinstance(value, ast.Call):
            return False
        return self.cpu_tensor_call(value, self.q(value.func) or "")


    def cpu_tensor_call(self, value: ast.Call, name: str) -> bool:
        """:meth:`is_cpu_tensor` of a call whose callee's qualified name (``q``, ``""`` for none) is ``name``:
        for a caller that needs the name for other tests as well (track_assign)."""
        if name == "torch.from_numpy" or (name in ("torch.tensor", "torch.as_tensor") and kwarg(value, "device") is None):
            return True
        if isinstance(value.func, ast.Attribute):
            recv = value.func.value
            if value.func.attr == "cpu":
                return True
            if value.func.attr in ("double", "float", "long", "int") and isinstance(recv, ast.Name):
                return recv.id in self.cpu_vars
        return False


    def is_numpy_f64(self, value: ast.AST, depth: int = 0) -> bool:
        """Whether ``value`` is a NumPy float64 array: a factory without a narrower dtype, ``astype(float)``, a
        name or attribute bound to one, or arithmetic, slicing and dtype-keeping NumPy functions over one
        (``np.cumprod(1.0 - betas)``, ``self.alphas[:-1]``, ``np.sqrt(self.alphas_cumprod)``)."""
        if depth > _F64_DEPTH:
            return False
        if isinstance(value, ast.Name):
            return value.id in self.np_f64_vars
        if isinstance(value, ast.Attribute):
            key = dotted(value)
            return key is not None and key in self.np_f64_vars
        parts = dtype_operands(value)
        if parts is not None:
            return any(self.is_numpy_f64(p, depth + 1) for p in parts)
        if not isinstance(value, ast.Call):
            return False
        return self.numpy_f64_call(value, self.q(value.func) or "", depth)


    def numpy_f64_call(self, value: ast.Call, name: str, depth: int = 0) -> bool:
        """:meth:`is_numpy_f64` of a call whose callee's qualified name (``q``, ``""`` for none) is ``name``: for a
        caller that needs the name for other tests as well (track_assign computes it once per assignment)."""
        if name in _NUMPY_F64_FACTORIES:
            dtype = kwarg(value, "dtype")
            return dtype is None or self.is_f64_dtype(dtype)
        if name in ("numpy.array", "numpy.asarray") or (isinstance(value.func, ast.Attribute) and value.func.attr == "astype"):
            dtype = kwarg(value, "dtype") or (value.args[0] if value.func.__class__ is ast.Attribute
                                               and getattr(value.func, "attr", "") == "astype" and value.args else None)
            if dtype is not None:
                return self.is_f64_dtype(dtype)
        if name in _NUMPY_F64_KEEPERS:
            return kwarg(value, "dtype") is None and any(self.is_numpy_f64(a, depth + 1) for a in value.args)
        if isinstance(value.func, ast.Attribute) and value.func.attr in _NUMPY_F64_METHODS and not name.startswith("torch."):
            return self.is_numpy_f64(value.func.value, depth + 1)
        return False


    def sets_default_device(self) -> bool:
        """Whether the file calls ``torch.set_default_device`` / ``set_default_tensor_type`` anywhere (then a
        factory without ``device=`` may make its tensor on the GPU)."""
        if self.default_device is None:
            self.default_device = any(
                n.__class__ is ast.Call and isinstance(n.func, ast.Attribute)
                and n.func.attr in ("set_default_device", "set_default_tensor_type") for n in walk(self.tree))
        return self.default_device


    def cpu_f64_factory(self, node: ast.AST) -> bool:
        """``torch.linspace(..., dtype=torch.float64)`` without ``device=``: a float64 tensor made on the CPU."""
        if not isinstance(node, ast.Call) or (self.q(node.func) or "") not in TORCH_FACTORIES:
            return False
        dtype = kwarg(node, "dtype")
        return dtype is not None and (self.q(dtype) or "") in _F64_TORCH_NAMES and kwarg(node, "device") is None \
            and not self.sets_default_device()


    def is_torch_cpu_f64(self, value: ast.AST, depth: int = 0) -> bool:
        """A CPU float64 tensor: such a factory, a name bound to one, or arithmetic and dtype-keeping torch
        functions over one (``torch.cumprod(1.0 - betas, 0)``)."""
        if depth > _F64_DEPTH:
            return False
        if isinstance(value, ast.Name):
            return value.id in self.torch_f64_vars
        parts = dtype_operands(value)
        if parts is not None:
            return any(self.is_torch_cpu_f64(p, depth + 1) for p in parts)
        if self.cpu_f64_factory(value):
            return True
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "double" \
                and isinstance(value.func.value, ast.Name) and (value.func.value.id in self.cpu_vars
                                                               or value.func.value.id in self.torch_f64_vars):
            return True  # t.double() of a CPU tensor
        if isinstance(value, ast.Call) and (self.q(value.func) or "") in _TORCH_F64_KEEPERS:
            return kwarg(value, "dtype") is None and any(self.is_torch_cpu_f64(a, depth + 1) for a in value.args)
        return False


    def casts(self, node: ast.Call) -> bool:
        """Whether a ``.to(...)`` call names a dtype (a cast, with or without a move)."""
        return any(self.is_dtype(a) for a in node.args) or any(k.arg == "dtype" for k in node.keywords)


    def is_f64_dtype(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in ("float64", "double", "f8")
        name = self.q(node) or ""
        return name in ("numpy.float64", "numpy.double", "float", "numpy.float_")

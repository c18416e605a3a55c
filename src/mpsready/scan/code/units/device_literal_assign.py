"""API103 ``cuda-device-literal`` for a device-named variable assigned a CUDA device: ``device = "cuda"``,
``dev: str = "cuda:0"``, ``map_location = f"cuda:{rank}"`` (names only; an attribute such as ``self.device``
is not reported here). Later uses of the name (``.to(device)``) are not reported again."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import cuda_text, device_like_name, is_cuda_literal
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


@on(ast.Assign)
def check(v, node: ast.Assign) -> None:
    lit = v.literal(node.value)
    for target in node.targets:
        if not isinstance(target, ast.Name) or not device_like_name(target.id):
            continue
        if lit is not None and is_cuda_literal(lit):
            v.add(A.CUDA_DEVICE_LITERAL, node, f"{target.id} = {lit!r}: a hard-coded CUDA device")
        elif lit is None and cuda_text(node.value):
            v.add(A.CUDA_DEVICE_LITERAL, node, f"{target.id} = {cuda_text(node.value)!r}: a hard-coded "
                  "CUDA device")


@on(ast.AnnAssign)
def check_annotated(v, node: ast.AnnAssign) -> None:
    if isinstance(node.target, ast.Name) and node.value is not None:
        lit = v.literal(node.value)
        if lit is not None and is_cuda_literal(lit) and device_like_name(node.target.id):
            record = _record_class(v, node)
            # issue 32, round 4: a field of a dataclass or pydantic model is a keyword parameter of its constructor:
            # its default runs only where a construction omits it (model/call_sites.py reads the calls)
            evidence = {"default_of": record.name, "method": False, "owner": record.name,
                        "parameter": node.target.id, "position": None, "field": True} if record else None
            v.add(A.CUDA_DEVICE_LITERAL, node, f"{node.target.id} = {lit!r}: a hard-coded CUDA device"
                  + (f" (a field of {record.name}, a default of its constructor)" if record else ""), evidence=evidence)


_RECORD_BASES = ("BaseModel", "BaseSettings", "NamedTuple")


def _record_class(v, node: ast.AnnAssign) -> ast.ClassDef | None:
    """The class whose body holds ``node`` directly when it builds its constructor from its annotated fields: a
    ``@dataclass`` (``dataclasses.dataclass``, ``pydantic.dataclasses.dataclass``, called or not) or a subclass of
    pydantic's ``BaseModel``/``BaseSettings`` or ``typing.NamedTuple`` by the base's name; else None."""
    cls = v.classes[-1] if getattr(v, "classes", None) else None
    if cls is None or not any(st is node for st in cls.body):
        return None
    for d in cls.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if (isinstance(target, ast.Name) and target.id == "dataclass") or (
                isinstance(target, ast.Attribute) and target.attr == "dataclass"):
            return cls
    for b in cls.bases:
        if (isinstance(b, ast.Name) and b.id in _RECORD_BASES) or (
                isinstance(b, ast.Attribute) and b.attr in _RECORD_BASES):
            return cls
    return None

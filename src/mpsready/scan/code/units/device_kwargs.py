"""API103 ``cuda-device-literal`` for device keywords and constructors: ``device="cuda"`` (also
``map_location``, ``devices``, ``device_map``; a literal, an f-string ``f"cuda:{rank}"``, or a name or attribute
assigned one), ``torch.device("cuda")``, and an argparse option about the device whose ``default`` is a CUDA
literal (``add_argument("--device", default="cuda")``, with the option and its line as evidence, so the
project model can say that one flag moves the run). A ``torch.device("cuda")`` that is only an operand of a
comparison (``if self.device == torch.device("cuda"):``) moves nothing and is not reported: constructing a
device object does not initialise CUDA (PyTorch 2.13.0 c10/core/Device.h: the string constructor parses
``(cpu|cuda)[:<index>]``, ``operator==`` compares type and index; ``torch.device("cuda")`` raises nothing in the
CPU-only 2.13.0 build), and the comparison is a CUDA test, so its body is judged as CUDA-guarded."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import DEVICE_KWARGS, cuda_text, is_cuda_literal
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


def _cuda_value(v, node: ast.AST) -> tuple[str | None, int | None]:
    """The CUDA device a value names (as written) and the line of the assignment it came from, else None."""
    value, line = v.string_value(node)
    text = cuda_text(node)
    value = value if value is not None else text
    if value is not None and (is_cuda_literal(value) or value == text) and not v.flagged_name(node):
        return value, line
    return None, None


_CLI_OPTIONS = ("click.option", "typer.Option")  # option constructors whose first arguments name the option


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    for kw in node.keywords:
        if kw.arg in DEVICE_KWARGS:
            value, line = _cuda_value(v, kw.value)
            if value is not None:
                where = f" (assigned at line {line})" if line else ""
                v.add(A.CUDA_DEVICE_LITERAL, kw.value, f"{kw.arg}={value!r}{where}: a hard-coded CUDA device")
        elif kw.arg == "default" and isinstance(kw.value, ast.Constant) and is_cuda_literal(kw.value.value):
            # issue 32, round 9: a click/typer option (`@click.option("--device", default="cuda")`) as argparse's
            if (attr == "add_argument" or (v.q(node.func) or "") in _CLI_OPTIONS) and any(
                    isinstance(a, ast.Constant) and isinstance(a.value, str) and "device" in a.value for a in node.args):
                option = next((a.value for a in node.args if isinstance(a, ast.Constant)
                               and isinstance(a.value, str) and a.value.startswith("--")), None)
                v.add(A.CUDA_DEVICE_LITERAL, kw.value, f"command-line device defaults to {kw.value.value!r}",
                      evidence={"option": option, "surface_line": node.lineno})
    if name == "torch.device" and node.args and id(node) not in v.compared and id(node) not in v.device_defaults:
        value, _ = _cuda_value(v, node.args[0])
        if value is not None:
            v.add(A.CUDA_DEVICE_LITERAL, node, f"torch.device({value!r}): a hard-coded CUDA device")

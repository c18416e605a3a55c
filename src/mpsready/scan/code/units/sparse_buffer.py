"""API118 ``sparse-buffer``: ``self.register_buffer(name, <sparse tensor>)`` (``.to_sparse()``,
``torch.sparse_coo_tensor``...): moving the module to MPS needs SparseMPS kernels, which PyTorch has from 2.9.0
(the shipped operator tables, ``ops/data/tables/torch-2.9.0.json.gz``: the first release whose
``_sparse_coo_tensor_with_dims_and_tensors`` has a SparseMPS kernel). Reported as a blocker here; the engine
judges it against the declared torch pin (:mod:`mpsready.scan.model.torch_pin`)."""

from __future__ import annotations

import ast

from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if attr != "register_buffer" or len(node.args) < 2:
        return
    for n in ast.walk(node.args[1]):
        if isinstance(n, ast.Call):
            callee = v.q(n.func) or ""
            if (isinstance(n.func, ast.Attribute) and n.func.attr in ("to_sparse", "to_sparse_coo", "to_sparse_csr")) \
                    or callee in ("torch.sparse_coo_tensor", "torch.sparse_csr_tensor"):
                v.add(A.SPARSE_BUFFER, node, "a sparse tensor is registered as a buffer: module.to('mps') needs "
                      "SparseMPS kernels (none before PyTorch 2.9)")
                return

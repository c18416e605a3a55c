"""Comparison of run records: ``mpsready compare A B [--reference C]``.

Library use (the report stage calls this)::

    from mpsready.compare import compare_records
    comp = compare_records("runs/cuda", "runs/mps", reference="runs/cpu64")
    comp.ok, comp.first_forward, comp.findings

Needs numpy (and reads safetensors files itself); never needs torch.
"""

from mpsready.compare.engine import (DEFAULT_K, Comparison, RunInfo, StepLoss, TensorComparison, ThreeWay,
                                     compare_records)
from mpsready.compare.tolerances import DTYPE_DEFAULTS, Tolerance, ToleranceSpec, build_spec, default_tolerance

__all__ = ["compare_records", "Comparison", "TensorComparison", "StepLoss", "ThreeWay", "RunInfo", "DEFAULT_K",
           "Tolerance", "ToleranceSpec", "build_spec", "default_tolerance", "DTYPE_DEFAULTS"]

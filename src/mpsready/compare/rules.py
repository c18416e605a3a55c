"""NUM1xx: numerics, found by comparing run records (``mpsready compare``)."""

from __future__ import annotations

from mpsready.findings import Severity
from mpsready.rules import Rule, register

ASSERT_CLOSE = ("torch.testing.assert_close and torch.isclose semantics and default tolerances: "
                "torch/testing/_comparison.py (_DTYPE_PRECISIONS), PyTorch 2.13.0")
REPRO = ("PyTorch docs, Reproducibility (https://pytorch.org/docs/2.13/notes/randomness.html): "
         "'Completely reproducible results are not guaranteed across PyTorch releases, individual commits, "
         "or different platforms'; each device has its own generator (torch.cuda.manual_seed, torch.mps.manual_seed)")

NUM101 = register(Rule(
    code="NUM101", name="out-of-tolerance", severity=Severity.DEGRADES,
    summary="A recorded tensor differs between the two runs beyond the tolerance "
            "(|b - a| > atol + rtol * |a| for some elements).",
    why="Kernels, reduction orders and precision defaults differ between CUDA and MPS, so a step that runs "
        "without error can still produce different numbers. The first tensor that fails in forward order is "
        "where to look; everything after it inherits the difference.",
    example="activation:encoder.layers.0.self_attn#0 step 0: 12.5% of elements outside rtol=1.3e-06 "
            "atol=1e-05, max abs 3.1e-04",
    fix="Look at the first diverging module; compare against a float64 CPU reference (--reference) to see "
        "whether the candidate is really less accurate; loosen the tolerance for that tensor only if the "
        "study's protocol accepts it (--tolerance 'activation:encoder.*=1e-4,1e-5').",
    source=ASSERT_CLOSE,
))

NUM102 = register(Rule(
    code="NUM102", name="nonfinite-one-side", severity=Severity.BLOCKER,
    summary="NaN or Inf appears in one run where the other has a finite value.",
    why="A NaN or Inf in one run only means the computation broke on that device (overflow in a lower "
        "precision, an operator returning garbage); results from that run cannot be used.",
    example="grad:fc.weight step 2: 96 NaN in B, 0 in A",
    fix="Find the first tensor with NaN (first divergence); check dtypes (float16/bfloat16 overflow), "
        "operators that fell back to the CPU, and the macOS version.",
    source=ASSERT_CLOSE,
))

NUM103 = register(Rule(
    code="NUM103", name="loss-differs", severity=Severity.DEGRADES,
    summary="The loss of a step differs between the runs beyond the tolerance, or its difference grows "
            "at every step.",
    why="The loss is what the training optimises; a difference that grows step after step means the two "
        "runs follow different trajectories, so results obtained on one cannot stand for the other.",
    example="loss step 3: 2.3026 in A, 2.3101 in B (rel 3.3e-03); difference grew 40x over 4 steps",
    fix="Fix the first diverging tensor of step 0 first; compare more steps to see whether the drift stays "
        "within what the study accepts.",
    source=ASSERT_CLOSE,
))

NUM104 = register(Rule(
    code="NUM104", name="structure-mismatch", severity=Severity.DEGRADES,
    summary="The two records do not hold the same tensors: a layer missing or renamed, a module called a "
            "different number of times, a shape that differs, a step or stage present or passing in one run only.",
    why="Tensors that cannot be paired cannot be compared; a stage that failed in one run means the "
        "comparison is incomplete.",
    example="activation:head.dropout#0 recorded in A only (missing in B: removed or renamed layer?)",
    fix="Record both runs from the same commit and entry, with the same --steps; check the stage errors "
        "of the run where a stage failed.",
    source="mpsready run record format v1 (docs/run-record.md)",
))

NUM105 = register(Rule(
    code="NUM105", name="rng-dependent", severity=Severity.INFO,
    summary="The runs used random operators (dropout, randn, multinomial), so differences may come from "
            "different random streams rather than from the device's arithmetic.",
    why="A shared seed does not give two devices the same random numbers: each backend has its own "
        "generator and algorithm, so dropout masks and sampled values differ between CUDA, MPS and CPU.",
    example="Dropout (encoder.dropout) active during the step; first divergence at activation:encoder.dropout#0",
    fix="Compare with fixed inputs and no randomness: put dropout in eval mode (model.eval()) or set p=0 for "
        "the comparison, replay the recorded inputs (mpsready record --synthetic-inputs), or generate random "
        "tensors on the CPU and move them to the device.",
    source=REPRO,
))

NUM106 = register(Rule(
    code="NUM106", name="less-accurate-than-baseline", severity=Severity.DEGRADES,
    summary="Against the high-precision reference, run B is less accurate than run A "
            "(err(B, ref) > k * err(A, ref)).",
    why="A difference between two devices is expected; a candidate device that is measurably further from "
        "the exact result than the baseline device changes the study's numbers, not just their last bits.",
    example="activation:fc1#0: B is 31x further from the float64 reference than A (k=2)",
    fix="Look for reduced-precision paths on the candidate (half-precision accumulation, fast-math, TF32 on "
        "the baseline changes the other way round); run that operator in float32 or on the CPU.",
    source=ASSERT_CLOSE + "; three-way rule documented in docs/compare.md",
))

NUM107 = register(Rule(
    code="NUM107", name="differs-but-not-worse", severity=Severity.INFO,
    summary="The runs differ beyond tolerance, but against the reference run B is as accurate as run A.",
    why="Different is not worse: both devices round differently around the exact result. This is the "
        "'MPS differs from CUDA' case, not 'MPS is worse than CUDA'.",
    example="12 tensors differ between A and B; none is further from the float64 reference in B than in A",
    fix="Widen the tolerance of the affected tensors to the observed spread if the protocol allows it.",
    source=ASSERT_CLOSE + "; three-way rule documented in docs/compare.md",
))

NUM108 = register(Rule(
    code="NUM108", name="stats-only", severity=Severity.INFO,
    summary="Some tensors were compared by their statistics only (no raw tensors in a record).",
    why="Statistics (mean, std, min, max, L2 norm) can prove that two tensors differ but cannot prove that "
        "they agree element by element; a stats-only pass is weaker evidence.",
    example="214 of 214 tensors compared from statistics only (record A has no raw tensors)",
    fix="Record both runs with --save-tensors to compare element by element (raw values then leave the machine "
        "only if you move the record).",
    source="mpsready run record format v1 (docs/run-record.md); bounds derived in docs/compare.md",
))

NUM109 = register(Rule(
    code="NUM109", name="dtype-differs", severity=Severity.INFO,
    summary="A tensor has a different dtype in the two runs.",
    why="A different dtype (float16 on one device, float32 on the other; a float64 reference) changes both "
        "the numbers and the default tolerance, which becomes the loosest of the two dtypes.",
    example="activation:fc1#0: float32 in A, float16 in B (default tolerance of float16 used)",
    fix="Make sure autocast and dtype settings are the same on both devices unless the comparison is meant "
        "to be against a reference of another precision.",
    source=ASSERT_CLOSE + " (default_tolerances takes the loosest dtype)",
))

"""Rules the report stage emits (PRF2xx): run time and memory of the real job."""

from mpsready.findings import Severity
from mpsready.rules import Rule, register

PEAK_MEMORY = register(Rule(
    code="PRF201", name="peak-memory-exceeds-mac", severity=Severity.BLOCKER,
    summary="The step's observed peak device memory is above what the Mac can give the GPU.",
    why="On Apple silicon the GPU shares the unified memory with the system; PyTorch caps MPS allocations at "
        "PYTORCH_MPS_HIGH_WATERMARK_RATIO (default 1.7) times the recommended working set, which macOS sets "
        "below the physical memory. A step that needs more fails with 'MPS backend out of memory'.",
    example="peak 48.0 GiB on cuda:0; the Mac has 32.0 GiB",
    fix="Lower the batch size (accumulate gradients), use a Mac with more memory, or keep this job on CUDA.",
    source="PyTorch docs, MPS environment variables (torch 2.13, docs/source/mps_environment_variables.rst)",
))

FALLBACK_SHARE = register(Rule(
    code="PRF202", name="cpu-fallback-share", severity=Severity.DEGRADES,
    summary="A large share of the step's time would run on the CPU through the MPS fallback.",
    why="With PYTORCH_ENABLE_MPS_FALLBACK=1 an operator without an MPS kernel runs on the CPU; its inputs "
        "and outputs are copied between devices at every call, so the step slows down by that share or more.",
    example="aten::_ctc_loss falls back: about 35% of the step time",
    fix="Upgrade PyTorch to the release that adds the kernel (see the trace's fixed_in), or replace the call.",
    source="PyTorch MPS fallback, aten/src/ATen/mps/MPSFallback.mm (torch 2.13)",
))

TIME_BUDGET = register(Rule(
    code="PRF203", name="projected-time-over-budget", severity=Severity.BLOCKER,
    summary="The projected time of the real job on the Mac exceeds the time budget given.",
    why="The projection multiplies the observed MPS step time by the job's step count; the budget is the "
        "study's, given with --time-budget-hours.",
    example="20000 steps x 0.41 s = 2.3 h on mps; budget 1.0 h",
    fix="Run the long job on CUDA and keep the Mac for development, or shorten the job.",
    source="mpsready report (projection from observed step times)",
))

SLOWER_THAN_CUDA = register(Rule(
    code="PRF204", name="mps-slower-than-cuda", severity=Severity.INFO,
    summary="The observed MPS step is several times slower than the CUDA step.",
    why="MPS and CUDA GPUs differ in throughput; the ratio decides whether long runs belong on the Mac.",
    example="step 0.41 s on mps vs 0.05 s on cuda (8.2x)",
    fix="Keep long training on CUDA; use the Mac for development and short runs.",
    source="mpsready report (ratio of observed step times)",
))

"""ENV1xx: findings about the environment a run happens in (``mpsready env``).

Every finding here is ``observed``: it was measured in the environment it describes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from mpsready.findings import Basis, Finding, Location, Severity
from mpsready.rules import Rule, register

_MPS_DOCS = "PyTorch 2.13 docs, backends.html#torch-backends-mps and notes/mps.html"
_ENV_DOCS = "PyTorch 2.13 docs, mps_environment_variables.html"
_ROSETTA = ("Apple, About the Rosetta Translation Environment "
            "(https://developer.apple.com/documentation/apple-silicon/about-the-rosetta-translation-environment)")
_TF32 = "PyTorch 2.13 docs, notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices"

ENV101 = register(Rule(
    "ENV101", "mps-built-not-available", Severity.BLOCKER,
    "PyTorch is built with MPS but `torch.backends.mps.is_available()` is False on this Mac.",
    "Nothing can be placed on device 'mps'; code that falls back to the CPU silently runs there.",
    "torch.backends.mps.is_built() -> True\ntorch.backends.mps.is_available() -> False",
    "Use macOS 12.3 or newer (14.0+ for PyTorch 2.12+) on Apple silicon, with a native arm64 Python. On an Intel "
    "Mac MPS needs an AMD GPU (it never uses the integrated Intel GPU) and PyTorch 2.2.2 at most.",
    _MPS_DOCS + "; aten/src/ATen/mps/MPSDevice.mm (the first Metal device that is not low-power)"))
ENV102 = register(Rule(
    "ENV102", "rosetta-python", Severity.BLOCKER,
    "An x86_64 Python runs under Rosetta 2 on Apple silicon.",
    "x86_64 macOS PyTorch wheels stop at 2.2.2 (no later release, so no later MPS fix); NumPy/PyTorch run "
    "emulated and slow, and mixed-arch installs are a known source of wrong results.",
    "platform.machine() -> 'x86_64'; sysctl.proc_translated -> 1",
    "Install a native arm64 Python (python.org universal2, Homebrew in /opt/homebrew, or conda-forge osx-arm64) "
    "and reinstall the environment.",
    _ROSETTA))
ENV103 = register(Rule(
    "ENV103", "mps-fallback-enabled", Severity.DEGRADES,
    "`PYTORCH_ENABLE_MPS_FALLBACK` is set: operators without an MPS kernel run on the CPU.",
    "The run finishes, but those operators copy data to the CPU and back; the warning is emitted once per "
    "operator, so it does not say how often. Use `mpsready record --device mps` to count the calls.",
    "PYTORCH_ENABLE_MPS_FALLBACK=1 python train.py",
    "Keep it only while you know which operators fall back, and record them (`mpsready record`).",
    _ENV_DOCS + "; aten/src/ATen/mps/MPSFallback.mm"))
ENV104 = register(Rule(
    "ENV104", "torch-missing", Severity.INFO,
    "PyTorch is not importable in this environment.",
    "No MPS or CUDA fact can be checked; only the OS, Python and packages were recorded.",
    "import torch -> ModuleNotFoundError",
    "Run `mpsready env` inside the environment that runs the project.",
    "Python import system"))
ENV105 = register(Rule(
    "ENV105", "mps-not-built", Severity.INFO,
    "This PyTorch build has no MPS support (`is_built()` is False).",
    "Expected on Linux and Windows builds; on a Mac it means a wrong wheel (x86_64 or a custom build).",
    "torch.backends.mps.is_built() -> False",
    "On a Mac, install the official macOS arm64 wheel.",
    _MPS_DOCS))
ENV106 = register(Rule(
    "ENV106", "tf32-enabled", Severity.DEGRADES,
    "TF32 (or reduced float32 matmul precision) is enabled with a CUDA device present.",
    "CUDA matmuls/convolutions then run with a 10-bit mantissa; MPS computes float32 differently, so a "
    "CUDA reference made with TF32 differs from an MPS run by more than float32 rounding.",
    "torch.backends.cudnn.allow_tf32 = True  # the default\ntorch.set_float32_matmul_precision('high')",
    "For the reference run: torch.backends.cuda.matmul.allow_tf32 = False; torch.backends.cudnn.allow_tf32 = "
    "False; torch.set_float32_matmul_precision('highest') (or NVIDIA_TF32_OVERRIDE=0).",
    _TF32))
ENV107 = register(Rule(
    "ENV107", "mps-fast-math", Severity.DEGRADES,
    "`PYTORCH_MPS_FAST_MATH` is set: Metal fast-math kernels trade precision for speed.",
    "Results differ from the default MPS kernels and further from a CUDA/CPU reference.",
    "PYTORCH_MPS_FAST_MATH=1",
    "Unset it for comparison runs.",
    _ENV_DOCS))
ENV108 = register(Rule(
    "ENV108", "macos-too-old-for-mps", Severity.BLOCKER,
    "The macOS version is below 12.3, the minimum for the MPS backend.",
    "MPS is unavailable; PyTorch 2.12+ macOS wheels also need macOS 14.0.",
    "platform.mac_ver() -> ('12.2.1', ...)",
    "Upgrade macOS.",
    _MPS_DOCS + "; conda-forge/pytorch-cpu-feedstock#497 (macOS 14 for 2.12+)"))
ENV109 = register(Rule(
    "ENV109", "project-tree-dirty", Severity.INFO,
    "The project's git work tree has uncommitted changes.",
    "Records made from a dirty tree cannot be tied to a commit; two machines may run different code.",
    "git status --porcelain -> ' M train.py'",
    "Commit (or stash) before recording evidence.",
    "git status --porcelain"))
ENV110 = register(Rule(
    "ENV110", "nondeterministic-algorithms", Severity.INFO,
    "Deterministic algorithms are off.",
    "Repeated runs on one device can differ, so a device-to-device difference must exceed run-to-run noise.",
    "torch.are_deterministic_algorithms_enabled() -> False",
    "torch.use_deterministic_algorithms(True) (CUDA also needs CUBLAS_WORKSPACE_CONFIG=:4096:8) for reference runs.",
    "PyTorch 2.13 docs, notes/randomness.html"))


ENV111 = register(Rule(
    "ENV111", "mps-memory-limit-disabled", Severity.DEGRADES,
    "`PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0` turns off the MPS allocator's memory limit.",
    "The documentation warns that this may cause system failure if the system runs out of memory; "
    "a run that only fits this way does not fit.",
    "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 python train.py",
    "Lower the batch size or model size instead, and record peak memory (`mpsready record --device mps`).",
    _ENV_DOCS))


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip() not in ("", "0", "false", "False")


def _is_zero(text: str) -> bool:
    try:
        return float(text) == 0.0
    except ValueError:
        return False


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for p in text.split("."):
        if not p.isdigit():
            break
        parts.append(int(p))
    return tuple(parts)


def _f(rule: Rule, message: str, **evidence: Any) -> Finding:
    return Finding(code=rule.code, severity=rule.severity, message=message,
                   location=Location(stage="env"), basis=Basis.OBSERVED, fix=rule.fix, source=rule.source,
                   evidence=evidence)


def evaluate(rec: Mapping[str, Any]) -> list[Finding]:
    """ENV1xx findings for an ``mpsready.env`` record (a dict as :func:`collect_env` builds it)."""
    out: list[Finding] = []
    os_ = rec.get("os") or {}
    machine = rec.get("machine") or {}
    torch_ = rec.get("torch") or {}
    env = rec.get("env_vars") or {}
    prec = rec.get("precision") or {}
    on_mac = os_.get("system") == "Darwin"
    rosetta = (machine.get("rosetta") or {}).get("translated")
    if rosetta:
        out.append(_f(ENV102, f"Python ({rec.get('python', {}).get('arch')}) runs under Rosetta 2 on Apple silicon",
                      arch=(rec.get("python") or {}).get("arch"), proc_translated=1))
    macos = os_.get("macos_version")
    if on_mac and macos and _version_tuple(macos) < (12, 3):
        out.append(_f(ENV108, f"macOS {macos} is below 12.3, the minimum for MPS", macos_version=macos))
    if torch_.get("installed") is False:
        out.append(_f(ENV104, "PyTorch is not installed here: " + str(torch_.get("error", "")),
                      error=torch_.get("error")))
    mps = torch_.get("mps") or {}
    if torch_.get("installed"):
        if mps.get("built") is False:
            sev = Severity.BLOCKER if on_mac else Severity.INFO
            f = _f(ENV105, f"torch {torch_.get('version')} was built without MPS ({mps.get('meaning')})",
                   is_built=False, is_available=mps.get("available"))
            out.append(replace(f, severity=sev))
        elif mps.get("built") and mps.get("available") is False:
            sev = ENV101.severity if on_mac else Severity.INFO
            f = _f(ENV101, f"MPS is built but not available here ({mps.get('meaning')})", is_built=True,
                   is_available=False, system=os_.get("system"))
            out.append(replace(f, severity=sev))
    if _truthy(env.get("PYTORCH_ENABLE_MPS_FALLBACK")):
        out.append(_f(ENV103, "PYTORCH_ENABLE_MPS_FALLBACK="
                      f"{env['PYTORCH_ENABLE_MPS_FALLBACK']}: unsupported operators will run on the CPU",
                      PYTORCH_ENABLE_MPS_FALLBACK=env["PYTORCH_ENABLE_MPS_FALLBACK"]))
    hw = env.get("PYTORCH_MPS_HIGH_WATERMARK_RATIO")
    if hw is not None and _is_zero(hw):
        out.append(_f(ENV111, f"PYTORCH_MPS_HIGH_WATERMARK_RATIO={hw}: no MPS memory limit",
                      PYTORCH_MPS_HIGH_WATERMARK_RATIO=hw))
    if _truthy(env.get("PYTORCH_MPS_FAST_MATH")):
        out.append(_f(ENV107, "PYTORCH_MPS_FAST_MATH is set", PYTORCH_MPS_FAST_MATH=env["PYTORCH_MPS_FAST_MATH"]))
    cuda = torch_.get("cuda") or {}
    if cuda.get("available") and env.get("NVIDIA_TF32_OVERRIDE") != "0":
        tf32 = {k: prec.get(k) for k in ("cuda_matmul_allow_tf32", "cudnn_allow_tf32")}
        reduced = prec.get("float32_matmul_precision") not in (None, "highest")
        if any(tf32.values()) or reduced:
            on = [k for k, v in tf32.items() if v] + (
                [f"float32_matmul_precision={prec.get('float32_matmul_precision')}"] if reduced else [])
            out.append(_f(ENV106, "TF32 is on for CUDA: " + ", ".join(on), **tf32,
                          float32_matmul_precision=prec.get("float32_matmul_precision")))
    if prec and prec.get("deterministic_algorithms") is False:
        out.append(_f(ENV110, "deterministic algorithms are off", deterministic_algorithms=False))
    git = ((rec.get("project") or {}).get("git")) or {}
    if git.get("dirty"):
        out.append(_f(ENV109, f"project tree is dirty ({git.get('changed_files')} changed files) at "
                      f"{str(git.get('commit'))[:12]}", commit=git.get("commit"),
                      changed_files=git.get("changed_files")))
    return out

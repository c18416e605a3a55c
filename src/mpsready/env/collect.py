"""Collect the environment record (``mpsready env``), schema ``mpsready.env`` version 1.

The record is a JSON-able dict (documented field by field in ``docs/env.md``)::

    {schema, mpsready, created, basis: "observed",
     python:   {version, implementation, executable, arch, bits},
     os:       {system, release, macos_version},
     machine:  {arch, apple_silicon, rosetta, chip, memory_bytes, unified_memory, cpu_count},
     torch:    see mpsready.env.torchinfo.torch_facts (installed, version, mps{built, available, meaning}, cuda{...})
     precision: see mpsready.env.torchinfo.precision_settings
     env_vars: {NAME: value or null} for every watched variable (MPS_ENV_VARS, CUDA_NUMERICS_ENV_VARS, ...)
     packages: {distribution name (lower case): version} from importlib.metadata
     project:  {path, git: {commit, branch, dirty} or {error}} or null
     findings: [Finding.to_dict()]}   # ENV1xx, mpsready.env.rules
"""

from __future__ import annotations

import importlib.metadata as md
import os
import platform as _platform
import sys
from pathlib import Path
from typing import Any, Mapping

from mpsready.env.platform import Platform, RealPlatform
from mpsready.env.torchinfo import precision_settings, torch_facts
from mpsready.schema import envelope

SCHEMA_NAME = "mpsready.env"
SCHEMA_VERSION = 1

# MPS variables, documented in PyTorch 2.13 docs, mps_environment_variables.html
# ("MPS Environment Variables"). PYTORCH_ENABLE_MPS_FALLBACK is read once at library load.
MPS_ENV_VARS = (
    "PYTORCH_ENABLE_MPS_FALLBACK",
    "PYTORCH_MPS_HIGH_WATERMARK_RATIO",
    "PYTORCH_MPS_LOW_WATERMARK_RATIO",
    "PYTORCH_MPS_FAST_MATH",
    "PYTORCH_MPS_PREFER_METAL",
    "PYTORCH_DEBUG_MPS_ALLOCATOR",
    "PYTORCH_MPS_LOG_PROFILE_INFO",
    "PYTORCH_MPS_TRACE_SIGNPOSTS",
    "PYTORCH_ENABLE_MPS_BATCH_SPLIT_SIZE",
)
# CUDA variables that change numerics: CUBLAS_WORKSPACE_CONFIG (deterministic cuBLAS,
# notes/randomness.html), NVIDIA_TF32_OVERRIDE=0 disables TF32 whatever torch says
# (notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices).
CUDA_NUMERICS_ENV_VARS = ("CUBLAS_WORKSPACE_CONFIG", "NVIDIA_TF32_OVERRIDE")
# Others that change which device or how many threads run the step.
OTHER_ENV_VARS = ("CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                  "PYTHONHASHSEED", "CUDA_LAUNCH_BLOCKING")
WATCHED_ENV_VARS = MPS_ENV_VARS + CUDA_NUMERICS_ENV_VARS + OTHER_ENV_VARS
NUMERICS_ENV_VARS = ("PYTORCH_MPS_FAST_MATH", "PYTORCH_MPS_PREFER_METAL", "PYTORCH_ENABLE_MPS_FALLBACK",
                     ) + CUDA_NUMERICS_ENV_VARS + ("PYTHONHASHSEED",)


def python_facts(plat: Platform) -> dict[str, Any]:
    return {
        "version": _platform.python_version(),
        "implementation": _platform.python_implementation(),
        "executable": sys.executable,
        "arch": plat.interpreter_machine(),
        "bits": 64 if sys.maxsize > 2**32 else 32,
    }


def os_facts(plat: Platform) -> dict[str, Any]:
    return {"system": plat.system(), "release": plat.release(), "macos_version": plat.mac_version()}


def machine_facts(plat: Platform) -> dict[str, Any]:
    """Chip, memory and Rosetta state (sysctl names and sources: :mod:`mpsready.env.platform`)."""
    system = plat.system()
    arch = plat.interpreter_machine()
    facts: dict[str, Any] = {"arch": arch, "apple_silicon": None, "rosetta": None, "chip": None,
                             "memory_bytes": None, "unified_memory": None, "cpu_count": os.cpu_count()}
    if system == "Darwin":
        arm64 = plat.sysctl_int("hw.optional.arm64")
        translated = plat.sysctl_int("sysctl.proc_translated")
        facts["apple_silicon"] = bool(arm64) or arch == "arm64"
        # proc_translated: 1 translated, 0 native, absent on Intel (Apple, Rosetta environment doc).
        facts["rosetta"] = {"translated": translated == 1 if translated is not None else False,
                            "proc_translated": translated,
                            "source": "sysctl.proc_translated (Apple: About the Rosetta Translation Environment)"}
        facts["chip"] = plat.sysctl_str("machdep.cpu.brand_string")
        facts["memory_bytes"] = plat.sysctl_int("hw.memsize")
        # Apple silicon GPUs share the system memory (unified memory); Intel Macs have discrete VRAM.
        facts["unified_memory"] = bool(facts["apple_silicon"])
    elif system == "Linux":
        facts["apple_silicon"] = False
        facts["chip"] = _proc_field(plat.read_text("/proc/cpuinfo"), "model name")
        mem = _proc_field(plat.read_text("/proc/meminfo"), "MemTotal")
        if mem and mem.split()[0].isdigit():
            facts["memory_bytes"] = int(mem.split()[0]) * 1024
        facts["unified_memory"] = False
    return facts


def _proc_field(text: str | None, name: str) -> str | None:
    for line in (text or "").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == name:
            return value.strip()
    return None


# Any other variable with these prefixes is recorded too (new MPS knobs appear between releases).
MPS_ENV_PREFIXES = ("PYTORCH_MPS_", "PYTORCH_ENABLE_MPS_", "PYTORCH_DEBUG_MPS_")


def env_vars(environ: Mapping[str, str]) -> dict[str, str | None]:
    """Every watched variable (value or ``None``), plus any set variable with an MPS prefix."""
    out: dict[str, str | None] = {name: environ.get(name) for name in WATCHED_ENV_VARS}
    for name in sorted(environ):
        if name.startswith(MPS_ENV_PREFIXES) and name not in out:
            out[name] = environ[name]
    return out


def package_versions() -> dict[str, str]:
    """Every installed distribution, ``{normalised name: version}``, from importlib.metadata (no pip)."""
    out: dict[str, str] = {}
    for dist in md.distributions():
        name = (dist.metadata["Name"] or "").strip()
        if name:
            out.setdefault(name.lower().replace("_", "-"), dist.version)
    return dict(sorted(out.items()))


def git_state(path: Path) -> dict[str, Any]:
    """``{commit, branch, dirty, changed_files}`` of the git work tree at ``path``, or ``{"error": ...}``: read
    from the repository's files, never by running ``git`` in the project (its config can name commands that
    ``git status`` runs: :mod:`mpsready.env.gitfiles`)."""
    from mpsready.env.gitfiles import git_state as read_state

    return read_state(path)


def collect_env(project: str | os.PathLike[str] | None = None, *, platform: Platform | None = None,
                environ: Mapping[str, str] | None = None, with_torch: bool = True) -> dict[str, Any]:
    """Measure this environment and return the ``mpsready.env`` v1 record (see module docstring).

    ``project`` is a directory whose git commit and dirty state are recorded (``None``: no
    project section). ``platform`` and ``environ`` default to the running system; tests pass
    fakes. ``with_torch=False`` skips importing PyTorch (the record then says it was not checked).
    Raises nothing for missing tools: each unknown fact is ``None`` or carries an ``error``.
    """
    from mpsready.env.rules import evaluate

    plat = platform or RealPlatform()
    env = os.environ if environ is None else environ
    rec = envelope(SCHEMA_NAME, SCHEMA_VERSION, basis="observed")
    rec["python"] = python_facts(plat)
    rec["os"] = os_facts(plat)
    rec["machine"] = machine_facts(plat)
    rec["torch"] = torch_facts() if with_torch else {"installed": None, "error": "not checked"}
    rec["precision"] = precision_settings() if with_torch else {}
    rec["env_vars"] = env_vars(env)
    rec["packages"] = package_versions()
    if project is not None:
        p = Path(project).resolve()
        rec["project"] = {"path": str(p), "git": git_state(p)}
    else:
        rec["project"] = None
    rec["findings"] = [f.to_dict() for f in evaluate(rec)]
    return rec

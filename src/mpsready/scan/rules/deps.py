"""DEP1xx: dependencies declared anywhere in a project (requirements, pyproject, conda, Dockerfile, ...)."""

from mpsready.scan.rules._define import rule



def _import_triggers() -> tuple[str, ...]:
    """Top-level import names of every knowledge-base entry (``nvidia.dali`` -> ``nvidia``)."""
    from mpsready.scan import knowledge  # lazy: the registry is imported without the data files

    return tuple(sorted({name.split(".")[0] for name in knowledge.import_names()}))


KB = "mpsready knowledge base src/mpsready/scan/data/packages.yaml (each entry names its own source)"

CUDA_ONLY_PACKAGE = rule(
    "DEP101", "cuda-only-package", "blocker",
    "A declared dependency has no macOS build, or only its CUDA kernels do the work the project needs.",
    "pip or conda cannot install it on macOS (no wheel; the source build needs nvcc), or it installs and its "
    "kernels refuse MPS tensors. The severity and alternative come from the package's knowledge-base entry.",
    "requirements.txt:\n    flash-attn==2.5.8",
    "Use the alternative named in the finding (for flash-attn: torch.nn.functional.scaled_dot_product_attention), "
    "or make the dependency optional (an extra) and guard its import with a fallback.",
    KB,
)
CUDA_FIRST_PACKAGE = rule(
    "DEP102", "cuda-first-package", "degrades",
    "A declared dependency installs on macOS, but the GPU features CUDA projects use from it are absent.",
    "The package imports, so nothing fails at install time; the CUDA-specific feature (NVML queries, NCCL "
    "collectives, GPU kernels) is missing or falls back to the CPU.",
    "requirements.txt:\n    pynvml",
    "Guard the CUDA-only calls, or use the Mac alternative named in the finding.",
    KB,
)
CUDA_WHEEL_INDEX = rule(
    "DEP103", "cuda-wheel-index", "degrades",
    "An install points pip at a CUDA wheel index (download.pytorch.org/whl/cu121 and the like).",
    "Those indexes carry Linux and Windows CUDA builds only. With --extra-index-url pip falls back to PyPI on "
    "macOS (the CPU/MPS wheel); with --index-url the install fails on macOS.",
    "requirements.txt:\n    --extra-index-url https://download.pytorch.org/whl/cu121\n    torch==2.3.1",
    "Keep the CUDA index in a Linux-only requirements file, or mark it with an environment marker in the "
    "install script; on macOS install torch from PyPI.",
    "https://pytorch.org/get-started/locally/ (macOS: 'pip3 install torch', no CUDA index)",
)
CUDA_LOCAL_VERSION = rule(
    "DEP104", "cuda-local-version", "blocker",
    "A pin names a CUDA build of PyTorch (torch==2.1.0+cu121) or a CUDA-suffixed package name.",
    "Local versions like +cu121 exist only on the CUDA indexes, for Linux and Windows; pip finds no match on "
    "macOS and the whole install fails.",
    "requirements.txt:\n    torch==2.1.0+cu121",
    "Pin the public version (torch==2.1.0) and choose the CUDA build through the index URL on Linux only, or "
    "add a marker: torch==2.1.0+cu121; sys_platform == 'linux'.",
    "https://download.pytorch.org/whl/torch/ (local +cu<NNN> builds: manylinux and win_amd64 wheels only)",
)
CONDA_CUDA = rule(
    "DEP105", "conda-cuda-channel", "blocker",
    "A conda environment uses the nvidia channel or CUDA packages (pytorch-cuda, cudatoolkit, cudnn).",
    "These packages have no osx-arm64 builds, so `conda env create` fails to solve on a Mac.",
    "environment.yml:\n    channels: [pytorch, nvidia]\n    dependencies:\n      - pytorch-cuda=12.1",
    "Keep a separate environment file for macOS without pytorch-cuda/cudatoolkit and without the nvidia channel.",
    "https://anaconda.org/pytorch/pytorch-cuda (linux-64 and win-64 only)",
)
CUDA_DOCKER_IMAGE = rule(
    "DEP106", "cuda-docker-image", "degrades",
    "A Dockerfile builds FROM an nvidia/cuda (or other CUDA) base image.",
    "Docker on macOS runs a Linux VM without access to the Apple GPU: the container runs, on the CPU only, and "
    "MPS is never available inside it.",
    "Dockerfile:\n    FROM nvidia/cuda:12.1.0-cudnn8-devel-ubuntu22.04",
    "Develop on the Mac natively (a virtual environment), and keep the image for the CUDA server.",
    "https://docs.docker.com/desktop/features/gpu/ (GPU support: NVIDIA on Windows/WSL2 only)",
)
CUDA_PACKAGE_IMPORT = rule(
    "DEP107", "cuda-package-import", "blocker",
    "Code imports a CUDA-only or CUDA-first package (whether or not it is declared anywhere).",
    "The import fails on a Mac (ImportError) or the kernels refuse MPS tensors. An import guarded by try/except "
    "with a fallback lowers this to 'degrades'.",
    "from flash_attn import flash_attn_func",
    "Guard the import with try/except ImportError and a pure-PyTorch fallback, or use the alternative named.",
    KB,
    triggers=_import_triggers,  # the import names of data/packages.yaml
)
UNKNOWN_DECLARATION = rule(
    "DEP108", "dynamic-declaration", "info",
    "A dependency list could not be read statically (setup.py computes it at run time).",
    "The scan never runs setup.py, so dependencies built by code it cannot follow are not checked.",
    "setup.py:\n    install_requires=get_requirements()",
    "Declare dependencies in pyproject.toml or a requirements file, or read them from a file with open().",
    "PEP 621 (https://peps.python.org/pep-0621/)",
)
TORCH_BEFORE_MPS = rule(
    "DEP109", "torch-before-mps", "blocker",
    "The project pins PyTorch to releases before 1.12, none of which has the MPS backend.",
    "torch.backends.mps first shipped in PyTorch 1.12 (May 2022); with torch==1.11 or older there is no Apple GPU "
    "device at all, and everything runs on the CPU.",
    "requirements.txt:\n    torch==1.8.1",
    "Move the pin to a current PyTorch (the newer the release, the more operators have MPS kernels).",
    "https://pytorch.org/blog/introducing-accelerated-pytorch-training-on-mac/ (MPS backend from PyTorch 1.12)",
)
NO_DECLARATION = rule(
    "DEP110", "no-dependency-declaration", "info",
    "The project declares no dependencies in any file kind the scan reads.",
    "With nothing declared there is nothing to check against the knowledge base, so the absence of DEP1xx "
    "findings says nothing about whether the dependencies install on a Mac; imports are still checked (DEP107).",
    "a project with train.py and no requirements.txt, pyproject.toml, setup.py, environment.yml, ...",
    "Declare the dependencies (requirements.txt or [project] dependencies in pyproject.toml) and scan again.",
    "PEP 621 (https://peps.python.org/pep-0621/); pip requirements file format "
    "(https://pip.pypa.io/en/stable/reference/requirements-file-format/)",
)
PIN_BELOW_MAC_SUPPORT = rule(
    "DEP111", "pin-below-mac-support", "blocker",
    "A dependency whose Mac (macOS wheel or MPS backend) support starts at some version is pinned below it.",
    "The knowledge base records the first release with a macOS arm64 wheel and an MPS backend; a pin that "
    "admits no such release installs the CUDA-only build, or nothing, on a Mac. Upgrading the pin is a "
    "declared-dependency change: the outlook lists it as a swap (mac_for_dev), not as a dead end.",
    "requirements.txt:\n    bitsandbytes==0.40.0",
    "Raise the pin to at least the version the finding names (`bitsandbytes>=0.50.0`), and check the code "
    "against that release's API.",
    "src/mpsready/scan/data/packages.yaml (mps_since per package, each with its source)",
)

"""Every declaration source, against fixture projects: exact codes, paths, lines and severities."""

from tests.scan.conftest import rows


def test_requirements_with_includes_markers_and_cuda_index(scan_fixture):
    r = scan_fixture("deps_req")
    assert rows(r) == [
        ("DEP101", "constraints.txt", 1, "blocker"),  # apex, via -c
        ("DEP104", "requirements.txt", 5, "blocker"),  # torch==2.1.0+cu121
        ("DEP101", "requirements.txt", 6, "blocker"),  # xformers (trailing comment ignored)
        ("DEP101", "requirements.txt", 8, "blocker"),  # flash-attn with a continued --hash line
        ("DEP101", "requirements/base.txt", 1, "blocker"),  # triton, via -r
        ("DEP101", "requirements/base.txt", 2, "blocker"),  # cupy-cuda12x (alias)
        ("DEP101", "requirements/base.txt", 3, "blocker"),  # nvidia-cudnn-cu12 (prefix nvidia-)
        ("DEP103", "requirements.txt", 4, "degrades"),  # --extra-index-url .../cu121
        ("INP107", "requirements.txt", 11, "info"),  # torch>=>2.0
    ]
    # bitsandbytes; sys_platform == "linux" is not installed on a Mac: no finding
    assert not any("bitsandbytes" in f.message for f in r.findings)
    names = sorted({d.name for d in r.dependencies})
    assert names == ["apex", "bitsandbytes", "cupy-cuda12x", "flash-attn", "numpy", "nvidia-cudnn-cu12", "torch",
                     "triton", "xformers"]


def test_pyproject_pep621_optional_groups_poetry_and_config(scan_fixture):
    r = scan_fixture("deps_pyproject")
    assert rows(r) == [
        ("DEP101", "pyproject.toml", 6, "blocker"),  # deepspeed
        ("DEP101", "pyproject.toml", 10, "blocker"),  # flash-attn in extra 'fast'
        ("DEP101", "pyproject.toml", 17, "blocker"),  # poetry mamba-ssm
        ("DEP101", "pyproject.toml", 20, "blocker"),  # poetry group gpu: tensorrt
    ]  # pynvml (dependency-groups dev) is DEP102, ignored by [tool.mpsready] ignore = ["DEP102"]
    optional = {f.evidence["package"]: f.evidence.get("optional", False) for f in r.findings}
    assert optional == {"deepspeed": False, "flash-attn": True, "mamba-ssm": False, "tensorrt": True}
    assert r.outlook.value == "mac_for_dev"  # mamba-ssm has an alternative (selective_scan_ref)


def test_setup_py_read_with_ast_and_setup_cfg(scan_fixture):
    r = scan_fixture("deps_setup")
    assert rows(r) == [
        ("DEP101", "requirements-gpu.txt", 2, "blocker"),  # nvdiffrast, read because setup.py names the file
        ("DEP101", "setup.cfg", 11, "blocker"),  # cudf-cu12 in an extra
        ("DEP101", "setup.py", 9, "blocker"),  # triton in EXTRAS (a module-level dict)
        ("DEP101", "setup.py", 13, "blocker"),  # spconv-cu118 concatenated to the helper's list
        ("DEP102", "setup.cfg", 6, "degrades"),  # torch-scatter: a CPU build for macOS (round 13)
    ]
    assert r.outlook.value == "stay_on_cuda"
    assert sorted(f.evidence["package"] for f in r.limiting) == ["nvdiffrast", "spconv"]


def test_conda_environment_channels_and_pip_section(scan_fixture):
    r = scan_fixture("deps_conda")
    assert rows(r) == [
        ("DEP105", "environment.yml", 9, "blocker"),  # pytorch-cuda=12.1
        ("DEP105", "environment.yml", 10, "blocker"),  # cudatoolkit=11.8
        ("DEP101", "environment.yml", 14, "blocker"),  # pip: xformers
        ("DEP105", "environment.yml", 4, "degrades"),  # channel nvidia
        ("DEP103", "environment.yml", 13, "degrades"),  # pip: --extra-index-url cu118
    ]


def test_pipfile_lockfile_dockerfile_shell_and_notebook(scan_fixture):
    r = scan_fixture("deps_misc")
    assert rows(r) == [
        ("DEP101", "Dockerfile", 3, "blocker"),  # RUN ... pip install vllm (continued lines)
        ("DEP103", "Dockerfile", 3, "blocker"),  # --index-url .../cu121 replaces PyPI
        ("DEP101", "Pipfile", 7, "blocker"),  # faiss-gpu
        ("DEP101", "demo.ipynb", 19, "blocker"),  # !pip install unsloth (cell 2, line 1; file line 19)
        ("API101", "demo.ipynb", 30, "blocker"),  # .cuda() in cell 3, line 2 (file line 30)
        ("DEP105", "install.sh", 3, "blocker"),  # conda install -c nvidia cuda-toolkit
        ("DEP101", "install.sh", 4, "blocker"),  # python -m pip install liger-kernel
        ("DEP101", "poetry.lock", 2, "blocker"),  # onnxruntime-gpu
        ("DEP106", "Dockerfile", 1, "degrades"),  # FROM nvidia/cuda
        ("DEP105", "install.sh", 3, "degrades"),  # channel nvidia
        ("DEP102", "Pipfile", 10, "info"),  # gpustat (dev-packages)
    ]
    cuda_call = next(f for f in r.findings if f.code == "API101")
    assert (cuda_call.evidence["cell"], cuda_call.evidence["cell_line"]) == (3, 2)
    assert any(d.name == "einops" and d.group == "cell:2" for d in r.dependencies)  # %pip install einops


def test_notebook_suppression_uses_the_cell_line(write_project):
    import json

    from mpsready.scan import scan_path

    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["import torch\n", "a = torch.ones(1).cuda()  # mpsready: ignore[API101]\n", "b = torch.ones(1).cuda()\n"]}]}
    root = write_project({"nb.ipynb": json.dumps(nb, indent=1)})
    r = scan_path(root)
    assert rows(r) == [("API101", "nb.ipynb", 14, "blocker")] and r.suppressed == 1  # file line of cell line 3


def test_torch_pins_before_mps(write_project):
    from mpsready.scan import scan_path

    root = write_project({
        "requirements.txt": "torch==1.8.1+cu111\ntorchvision==0.9.1\n",
        "requirements-new.txt": "torch>=1.7\n",
        "requirements-old.txt": "torch<1.12\n",
        "environment.yml": "dependencies:\n  - pytorch=1.7.1\n  - python=3.8\n",
        "environment-new.yml": "dependencies:\n  - pytorch=2.1\n",
    })
    assert rows(scan_path(root)) == [
        ("DEP109", "environment.yml", 2, "blocker"),
        ("DEP109", "requirements-old.txt", 1, "blocker"),
        ("DEP104", "requirements.txt", 1, "blocker"),
        ("DEP109", "requirements.txt", 1, "blocker"),
    ]


def test_source_names_are_the_readers_names_in_order():
    # DEP110 lists SOURCE_NAMES so that a project without declarations loads no reader; they must stay the readers'
    from mpsready.scan.sources import SOURCE_NAMES, all_sources

    assert SOURCE_NAMES == tuple(src.name for src in all_sources())

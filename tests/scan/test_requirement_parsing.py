"""Requirement and container parsing of issue 11: URL requirements, local-version wheels, per-requirement
options, versioned pip scripts, ARG-based FROM lines and heredoc RUN bodies."""

from __future__ import annotations

from mpsready.scan import scan_path
from mpsready.scan.sources.dockerfile import expand_args
from mpsready.scan.sources.requirements import split_options
from tests.scan.conftest import rows


def test_url_requirement_with_a_cuda_wheel_is_a_cuda_pin(write_project):
    r = scan_path(write_project({"requirements.txt": (
        "torch @ https://download.pytorch.org/whl/cu118/torch-2.0.1%2Bcu118-cp310-cp310-linux_x86_64.whl\n")}))
    assert rows(r) == [("DEP104", "requirements.txt", 1, "blocker")]
    assert r.dependencies[0].specifier == "==2.0.1+cu118"


def test_bare_wheel_url_names_its_distribution(write_project):
    r = scan_path(write_project({"requirements.txt": (
        "https://download.pytorch.org/whl/cu122/torchvision-0.16.0+cu122-cp310-cp310-linux_x86_64.whl\n"
        "https://example.org/pkgs/tidy-1.0-py3-none-any.whl\n")}))
    assert rows(r) == [("DEP103", "requirements.txt", 1, "blocker"), ("DEP104", "requirements.txt", 1, "blocker")]
    assert [(d.name, d.specifier) for d in r.dependencies] == [("torchvision", "==0.16.0+cu122"), ("tidy", "==1.0")]


def test_local_version_label_of_an_extension_wheel(write_project):
    r = scan_path(write_project({"requirements.txt": "scatterx==2.1.1+pt20cu118\ntidy==1.0+local\n"}))
    assert rows(r) == [("DEP104", "requirements.txt", 1, "blocker")]


def test_per_requirement_options_do_not_hide_the_requirement(write_project):
    r = scan_path(write_project({"requirements.txt": (
        "flash-attn==2.5.0 --no-build-isolation\nnumpy==1.26 --hash=sha256:abc --config-settings k=v\n")}))
    assert rows(r) == [("DEP101", "requirements.txt", 1, "blocker")]
    assert [(d.name, d.specifier) for d in r.dependencies] == [("flash-attn", "==2.5.0"), ("numpy", "==1.26")]


def test_split_options():
    assert split_options("numpy==1.26 --hash=sha256:abc --config-settings k=v") == (
        "numpy==1.26", [("--hash", "sha256:abc"), ("--config-settings", "k=v")])
    assert split_options("torch-cpu-x>=1 ; python_version > '3.8'") == ("torch-cpu-x>=1 ; python_version > '3.8'", [])


def test_versioned_pip_script_in_a_dockerfile_and_a_shell_script(write_project):
    r = scan_path(write_project({"Dockerfile": "FROM python:3.10\nRUN pip3.10 install flash-attn\n",
                                 "setup.sh": "python3.11 -m pip install xformers\n"}))
    assert rows(r) == [("DEP101", "Dockerfile", 2, "blocker"), ("DEP101", "setup.sh", 1, "blocker")]


def test_arg_based_from_line(write_project):
    r = scan_path(write_project({"Dockerfile": (
        "ARG CUDA=12.1.0\nARG BASE=nvidia/cuda:${CUDA}-cudnn8-devel-ubuntu22.04\nFROM ${BASE} AS build\n")}))
    assert rows(r) == [("DEP106", "Dockerfile", 3, "degrades")]
    assert r.findings[0].message == "base image nvidia/cuda:12.1.0-cudnn8-devel-ubuntu22.04 is a CUDA image"


def test_arg_substitution_forms():
    args = {"A": "x"}
    assert expand_args("$A/${A}/${B:-y}/${C}", args) == "x/x/y/${C}"


def test_heredoc_run_body_is_scanned(write_project):
    r = scan_path(write_project({"Dockerfile": (
        "FROM python:3.11\nRUN <<EOF\nset -e\npip install xformers numpy\nEOF\nRUN echo done\n")}))
    assert rows(r) == [("DEP101", "Dockerfile", 4, "blocker")]

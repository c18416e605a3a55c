"""A Dockerfile (and a shell script that clearly sets up a container) is the recipe of the CUDA server, not of
the Mac environment: its DEP findings are reported with ``evidence.reach = "container"`` and never limit the
main path's outlook. The same lines in a requirements file or a plain setup script still limit it."""

from __future__ import annotations

from mpsready.scan import scan_path
from mpsready.scan.formats.md import MarkdownFormat
from mpsready.scan.formats.terminal import TerminalFormat
from tests.scan.conftest import rows
from tests.scan.test_model_outlook import outlook

TRAIN = ("import torch\n\nif __name__ == '__main__':\n"
         "    dev = torch.accelerator.current_accelerator() or torch.device('cpu')\n"
         "    print(torch.nn.Linear(4, 4).to(dev)(torch.zeros(1, 4, device=dev)))\n")
DOCKERFILE = ("FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\n"
              "RUN pip install torch --index-url https://download.pytorch.org/whl/cu121\n"
              "RUN pip install flash-attn\nCOPY . /app\n")


def reaches(r):
    return [(f.code, f.location.path, (f.output_evidence() or {}).get("reach")) for f in r.findings]


def test_dockerfile_cuda_pins_do_not_limit_the_outlook(write_project):
    r = scan_path(write_project({"train.py": TRAIN, "requirements.txt": "torch\n", "Dockerfile": DOCKERFILE}))
    assert rows(r) == [("DEP103", "Dockerfile", 2, "blocker"), ("DEP101", "Dockerfile", 3, "blocker"),
                       ("DEP106", "Dockerfile", 1, "degrades")]
    assert reaches(r) == [("DEP103", "Dockerfile", "container"), ("DEP101", "Dockerfile", "container"),
                          ("DEP106", "Dockerfile", "container")]
    assert outlook(r) == ("runs_on_mac", [], []) and r.limiting == []
    text = TerminalFormat(width=200).render(r)
    assert "DEP103 Dockerfile:2 [container]  --index-url" in text
    assert "| `DEP106` | `Dockerfile:1` | main (container) | base image" in MarkdownFormat().render(r)


def test_same_pins_in_requirements_still_limit_it(write_project):
    r = scan_path(write_project({"train.py": TRAIN, "requirements.txt": (
        "--index-url https://download.pytorch.org/whl/cu121\ntorch\nflash-attn\n")}))
    assert rows(r) == [("DEP103", "requirements.txt", 1, "blocker"), ("DEP101", "requirements.txt", 3, "blocker")]
    assert reaches(r) == [("DEP103", "requirements.txt", None), ("DEP101", "requirements.txt", None)]
    assert outlook(r)[0] == "mac_for_dev"
    assert [(e.path, e.line, e.code) for e in r.edits] == [("requirements.txt", 1, "DEP103"),
                                                           ("requirements.txt", 3, "DEP101")]


def test_container_setup_scripts_but_not_other_scripts(write_project):
    install = "pip install flash-attn\n"
    r = scan_path(write_project({"train.py": TRAIN, "requirements.txt": "torch\n", "docker/entrypoint.sh": install,
                                 "build_docker.sh": install, ".devcontainer/post_create.sh": install}))
    assert reaches(r) == [("DEP101", ".devcontainer/post_create.sh", "container"),
                          ("DEP101", "build_docker.sh", "container"),
                          ("DEP101", "docker/entrypoint.sh", "container")]
    assert outlook(r) == ("runs_on_mac", [], [])
    r = scan_path(write_project({"scripts/setup_env.sh": install}))
    assert ("DEP101", "scripts/setup_env.sh", None) in reaches(r)
    assert outlook(r)[0] == "mac_for_dev"

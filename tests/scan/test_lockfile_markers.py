"""Lock files under the Mac's markers: a package that ``uv sync`` / ``poetry install`` / ``pdm sync`` leaves out on
macOS arm64 (every edge to it carries a Linux marker, or comes from a package left out) is listed but not judged.
Each case has a look-alike that must still be reported, with exact findings and outlook."""

from __future__ import annotations

import json

from mpsready.scan import scan_path
from mpsready.scan.formats.json import JsonFormat
from mpsready.scan.sources.lockgraph import Edge, Locked, OnMac, classify, left_out
from tests.scan.conftest import rows
from tests.scan.test_model_outlook import outlook

LINUX = "platform_machine == 'x86_64' and sys_platform == 'linux'"
TRAIN = "import torch\nprint(torch.ones(2, device='mps' if torch.backends.mps.is_available() else 'cpu'))\n"
PYPROJECT = '[project]\nname = "p"\nversion = "0.1"\ndependencies = ["torch==2.4.1"]\n'


def uv_lock(torch_edges: str, *, extra: str = "", requires: str = ">=3.9") -> str:
    return (f'version = 1\nrevision = 2\nrequires-python = "{requires}"\n'
            'resolution-markers = [\n    "sys_platform == \'darwin\'",\n    "sys_platform == \'linux\'",\n]\n\n'
            '[[package]]\nname = "nvidia-cublas-cu12"\nversion = "12.1.3.1"\n'
            'source = { registry = "https://pypi.org/simple" }\n\n'
            '[[package]]\nname = "nvidia-cudnn-cu12"\nversion = "9.1.0.70"\n'
            'source = { registry = "https://pypi.org/simple" }\n'
            'dependencies = [\n    { name = "nvidia-cublas-cu12" },\n]\n\n'
            '[[package]]\nname = "p"\nversion = "0.1"\nsource = { editable = "." }\n'
            f'dependencies = [\n    {{ name = "torch" }},\n]\n{extra}\n'
            '[[package]]\nname = "torch"\nversion = "2.4.1"\nsource = { registry = "https://pypi.org/simple" }\n'
            f'dependencies = [\n    {{ name = "filelock" }},\n{torch_edges}]\n\n'
            '[[package]]\nname = "triton"\nversion = "3.0.0"\nsource = { registry = "https://pypi.org/simple" }\n'
            'dependencies = [\n    { name = "filelock" },\n]\n\n'
            '[[package]]\nname = "filelock"\nversion = "3.16.1"\nsource = { registry = "https://pypi.org/simple" }\n')


LINUX_EDGES = (f'    {{ name = "nvidia-cublas-cu12", marker = "{LINUX}" }},\n'
               f'    {{ name = "nvidia-cudnn-cu12", marker = "{LINUX}" }},\n'
               f'    {{ name = "triton", marker = "{LINUX} and python_full_version < \'3.13\'" }},\n')


def scan(write_project, lock: str, name: str = "uv.lock"):
    root = write_project({"pyproject.toml": PYPROJECT, name: lock, "train.py": TRAIN})
    for other in ("uv.lock", "poetry.lock", "pdm.lock"):  # write_project reuses one folder within a test
        if other != name:
            (root / other).unlink(missing_ok=True)
    return scan_path(root)


def test_uv_lock_linux_only_nvidia_wheels_are_left_out(write_project):
    r = scan(write_project, uv_lock(LINUX_EDGES))
    assert rows(r) == []
    assert outlook(r) == ("runs_on_mac", [], [])
    left = {d.name: d.left_out_on_mac for d in r.dependencies if d.path == "uv.lock"}
    # nvidia-cudnn-cu12 -> nvidia-cublas-cu12 has no marker, but cudnn itself is left out: cublas follows it
    assert left == {"nvidia-cublas-cu12": LINUX, "nvidia-cudnn-cu12": LINUX, "p": None, "torch": None,
                    "triton": f"{LINUX} and python_full_version < '3.13'", "filelock": None}
    listed = json.loads(JsonFormat().render(r))["dependencies"]
    assert [(d["name"], d["left_out_on_mac"]) for d in listed if d["path"] == "uv.lock"][:2] == [
        ("nvidia-cublas-cu12", LINUX), ("nvidia-cudnn-cu12", LINUX)]


def test_uv_lock_edge_without_marker_still_installs_triton(write_project):
    edges = LINUX_EDGES.replace(f'{{ name = "triton", marker = "{LINUX} and python_full_version < \'3.13\'" }}',
                                '{ name = "triton" }')
    r = scan(write_project, uv_lock(edges))
    assert rows(r) == [("DEP101", "uv.lock", 42, "blocker")]  # the name line of triton's [[package]]
    # issue 32, round 12: a lock's wheel is one platform's; a Mac resolves pyproject.toml to its own wheels
    assert r.findings[0].evidence["optional"] == ("uv.lock pins one platform's wheels; a Mac installs pyproject.toml "
                                                  "with its own wheels of the same packages")
    assert outlook(r)[0] == "runs_on_mac"


def test_uv_lock_optional_dependency_edge_keeps_the_package_as_optional(write_project):
    extra = '\n[package.optional-dependencies]\ngpu = [\n    { name = "nvidia-cudnn-cu12" },\n]\n'
    r = scan(write_project, uv_lock(LINUX_EDGES, extra=extra))
    # the root's extra 'gpu' installs cudnn on any platform, and cudnn installs cublas: reported, but only
    # `uv sync --extra gpu` installs them, so (as an optional dependency in pyproject.toml) they do not limit
    assert rows(r) == [("DEP101", "uv.lock", 10, "blocker"), ("DEP101", "uv.lock", 15, "blocker")]
    assert [f.evidence["optional"] for f in r.findings] == [True, True]
    assert outlook(r) == ("runs_on_mac", [], [])
    # the same edge in a dev group, which `uv sync` installs by default: not an extra, but (issue 32, round 12) a
    # lock's wheels are one platform's, and pyproject.toml declares nothing CUDA-only
    r = scan(write_project, uv_lock(LINUX_EDGES, extra=extra.replace("optional-dependencies", "dev-dependencies")))
    assert rows(r) == [("DEP101", "uv.lock", 10, "blocker"), ("DEP101", "uv.lock", 15, "blocker")]
    assert r.findings[0].evidence["optional"].startswith("uv.lock pins one platform's wheels")
    assert outlook(r)[0] == "runs_on_mac"


def test_uv_lock_requires_python_below_3_11_evaluates_markers_for_3_10(write_project):
    edges = LINUX_EDGES.replace(f"{LINUX} and python_full_version < '3.13'", "python_full_version < '3.11'")
    assert rows(scan(write_project, uv_lock(edges))) == []  # a 3.11 Mac install skips triton
    r = scan(write_project, uv_lock(edges, requires=">=3.9, <3.11"))
    assert rows(r) == [("DEP101", "uv.lock", 42, "blocker")]  # a 3.10 one installs it


def test_uv_lock_forked_torch_versions_follow_the_edge_version(write_project):
    lock = ('version = 1\nrequires-python = ">=3.10"\n\n'
            '[[package]]\nname = "p"\nversion = "0.1"\nsource = { virtual = "." }\ndependencies = [\n'
            '    { name = "torch", version = "2.5.1", source = { registry = "https://pypi.org/simple" },'
            ' marker = "sys_platform == \'darwin\'" },\n'
            '    { name = "torch", version = "2.5.1+cu124", source = { registry = "https://download.pytorch.org/whl/cu124" },'
            ' marker = "sys_platform != \'darwin\'" },\n]\n\n'
            '[[package]]\nname = "torch"\nversion = "2.5.1"\nsource = { registry = "https://pypi.org/simple" }\n\n'
            '[[package]]\nname = "torch"\nversion = "2.5.1+cu124"\n'
            'source = { registry = "https://download.pytorch.org/whl/cu124" }\n')
    r = scan(write_project, lock)
    assert rows(r) == []
    assert outlook(r) == ("runs_on_mac", [], [])
    # the look-alike: both edges hold on the Mac, so the +cu124 build is installed there
    r = scan(write_project, lock.replace("sys_platform != 'darwin'", "sys_platform != 'win32'"))
    assert rows(r) == [("DEP104", "uv.lock", 19, "blocker")]  # the second torch table (was placed at the first)


def test_unreadable_edge_keeps_every_package(write_project):
    r = scan(write_project, uv_lock(LINUX_EDGES + "    3,\n"))
    assert rows(r) == [("DEP101", "uv.lock", 10, "blocker"), ("DEP101", "uv.lock", 15, "blocker"),
                       ("DEP101", "uv.lock", 43, "blocker")]  # one line more: the unreadable edge


POETRY = ('[[package]]\nname = "nvidia-cublas-cu12"\nversion = "12.1.3.1"\noptional = false\npython-versions = ">=3"\n\n'
          '[[package]]\nname = "nvidia-cudnn-cu12"\nversion = "9.1.0.70"\noptional = false\npython-versions = ">=3"\n\n'
          '[package.dependencies]\nnvidia-cublas-cu12 = "*"\n\n'
          '[[package]]\nname = "torch"\nversion = "2.4.1"\noptional = false\npython-versions = ">=3.8"\n\n'
          '[package.dependencies]\nfilelock = "*"\n'
          'nvidia-cudnn-cu12 = {version = "9.1.0.70", markers = "platform_system == \\"Linux\\" and platform_machine == \\"x86_64\\""}\n'
          'triton = {version = "3.0.0", markers = "platform_system == \\"Linux\\" and platform_machine == \\"x86_64\\""}\n\n'
          '[[package]]\nname = "triton"\nversion = "3.0.0"\noptional = false\npython-versions = "*"\n\n'
          '[[package]]\nname = "filelock"\nversion = "3.16.1"\noptional = false\npython-versions = ">=3.8"\n\n'
          '[metadata]\nlock-version = "2.0"\npython-versions = "^3.10"\n')


def test_poetry_lock_markers_leave_nvidia_and_triton_out(write_project):
    r = scan(write_project, POETRY, "poetry.lock")
    assert rows(r) == []
    assert outlook(r) == ("runs_on_mac", [], [])
    r = scan(write_project, POETRY.replace('triton = {version = "3.0.0", markers', 'triton = {version = "3.0.0", x'),
             "poetry.lock")
    assert rows(r) == [("DEP101", "poetry.lock", 28, "blocker")]


def test_poetry_2_package_markers_and_pdm_requirement_markers(write_project):
    poetry2 = ('[[package]]\nname = "triton"\nversion = "3.0.0"\ngroups = ["main"]\n'
               'markers = "sys_platform == \\"linux\\""\n\n[metadata]\nlock-version = "2.1"\n')
    assert rows(scan(write_project, poetry2, "poetry.lock")) == []
    assert rows(scan(write_project, poetry2.replace('"linux', '"darwin'), "poetry.lock")) == [
        ("DEP101", "poetry.lock", 2, "blocker")]
    per_group = poetry2.replace('groups = ["main"]', 'groups = ["main", "dev"]').replace(
        'markers = "sys_platform == \\"linux\\""', 'markers = {main = "sys_platform == \\"linux\\""}')
    assert 'groups = ["main", "dev"]\nmarkers = {main' in per_group
    # the dev group installs triton with no marker: it stays
    assert rows(scan(write_project, per_group, "poetry.lock")) == [("DEP101", "poetry.lock", 2, "blocker")]
    assert rows(scan(write_project, per_group.replace("}", ', dev = "sys_platform == \'linux\'"}'),
                     "poetry.lock")) == []
    pdm = ('[metadata]\nrequires_python = ">=3.9"\n\n'
           '[[package]]\nname = "torch"\nversion = "2.4.1"\n'
           'dependencies = ["filelock", "triton==3.0.0; platform_system == \\"Linux\\" and platform_machine == \\"x86_64\\""]\n\n'
           '[[package]]\nname = "triton"\nversion = "3.0.0"\n')
    assert rows(scan(write_project, pdm, "pdm.lock")) == []
    assert rows(scan(write_project, pdm.replace("platform_system", "os_name == \\\"posix\\\" or platform_system"),
                     "pdm.lock")) == [("DEP101", "pdm.lock", 10, "blocker")]


def test_left_out_graph_rules():
    def on_mac(marker: str) -> bool:
        return marker != "linux"

    torch = Locked("torch", "1", [Edge("a", None, "linux"), Edge("torch", None, None)])
    a = Locked("a", "1", [Edge("b"), Edge("a")])  # a's self-edge (an extra naming a) keeps nothing alive
    b = Locked("b", "1", [Edge("c")])
    c = Locked("c", "1", [Edge("b")])  # b <-> c: a cycle keeps itself (no conclusion drawn from a guess)
    d = Locked("d", "1", [Edge("e")], marker="linux")  # its own marker
    e = Locked("e", "1")
    root = Locked("p", "0", [Edge("d", None, "linux")], root=True, marker="linux")  # a root always stays
    assert left_out([torch, a, b, c, d, e, root], on_mac) == {1: "linux", 4: "linux", 5: "linux"}


def test_optional_only_when_the_lock_lists_a_root():
    def on_mac(marker: str) -> bool:
        return marker != "linux"

    root = Locked("p", "0", [Edge("torch"), Edge("torch-cu", None, None, optional=True)], root=True)
    torch = Locked("torch", "1", [Edge("filelock")])
    cu = Locked("torch-cu", "1", [Edge("filelock"), Edge("nccl")])  # filelock is also required through torch
    assert classify([root, torch, cu, Locked("filelock"), Locked("nccl")], on_mac) == OnMac({}, {2, 4})
    # no root (poetry.lock, pdm.lock): nothing can be called optional
    assert classify([torch, cu, Locked("filelock"), Locked("nccl")], on_mac) == OnMac({}, set())

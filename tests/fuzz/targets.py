"""The readers the fuzz suite drives, with seeds and tokens per input kind (shared by tests/fuzz and
scripts/fuzz_long.py).

A target turns one input text into a call of one reader and says which exceptions that reader may raise
(its documented input error, which the CLI turns into exit 2). Anything else escaping is a crash. The
declaration sources are called through ``collect`` directly, not through the engine's total wrapper
(:func:`~mpsready.scan.sources.interface.read_source`), so a reader bug is seen, not absorbed.
"""

from __future__ import annotations

import atexit
import json
import random
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HOSTILE = ["1" * 5000, "9" * 401, "[" * 300, "]" * 300, "{a=" * 200, ".a" * 100, "\x00", "\r", "\t", "\\", '"', "'",
           "#", "\n", "-" * 300, "[lambda:" * 50, "1e400", "-Infinity", "NaN", "\ufeff", "é", "&&", "|", ";", "\\\n",
           "&a [*a, *a, *a]", "*a", "<<: *a"]


@dataclass
class Target:
    name: str
    run: Callable[[str], None]
    allowed: tuple[type[BaseException], ...] = ()
    seeds: list[str] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)


_WORK = Path(tempfile.mkdtemp(prefix="mpsready-fuzz-"))
atexit.register(shutil.rmtree, _WORK, True)  # the files the file-based targets write


def _file(name: str, text: str) -> Path:
    p = _WORK / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text.encode("utf-8", "surrogatepass"))
    return p


def _source_target(source, relpath: str, seeds: list[str], tokens: list[str]) -> Target:
    from mpsready.scan.sources.interface import ProjectFiles

    files = ProjectFiles(_WORK, 100_000)
    _file("base.txt", "numpy\n-r requirements.txt\n")

    def run(text: str) -> None:
        source.collect(relpath, text, files)

    return Target(f"{source.name} ({relpath})", run, (), seeds, tokens)


REQ_TOKENS = ["torch", "flash-attn", ">=2.0", "==2.1.0+cu121", ";", "python_version < '3.11'", "[extra]", "-r base.txt",
              "-c base.txt", "--index-url https://download.pytorch.org/whl/cu121", "-e .", "--hash=sha256:ab", "@",
              "https://x/y.whl", " #", "\\\n", "\n", "-f", "--extra-index-url=", "nvidia-cudnn-cu12"]
TOML_TOKENS = ["[project]", "[tool.mpsready]", "dependencies = [", "]", '"torch>=2"', ",", "\n", "[[package]]",
               'name = "torch"', 'version = "2.1"', "[packages]", "[dev-packages]", '"source"', "=", "true", "{", "}",
               "a.b.c", "[tool.poetry.dependencies]", "optional-dependencies", "[dependency-groups]", "select",
               "max-file-size", "fail-on", "exclude", "'''", '"""', "[[source]]", 'url = "https://x/whl/cu121"',
               "[tool.uv]", "index", "package", "packages", "1", "0x1F", "1979-05-27T07:32:00Z"]
CFG_TOKENS = ["[options]", "install_requires =", "\n  torch", "\n", "[options.extras_require]", "gpu = flash-attn",
              "file: base.txt", "[", "]", "=", ":", "; comment", "# c", "  ", "[metadata]", "%(x)s"]
YAML_TOKENS = ["dependencies:", "\n  - ", "pytorch-cuda=12.1", "channels:", "nvidia", "pip:", "\n    - ", "torch",
               "name: x", "- ", "&a", "*a", "[", "]", "{", "}", ":", "!!python/object", "---", "...", "|", ">", "'", '"',
               "nvidia::cuda-toolkit", "--index-url https://x/cu118", "1"]
DOCKER_TOKENS = ["FROM nvidia/cuda:12.1.0-runtime", "FROM python:3.11", "RUN pip install torch", "RUN [\"pip\", \"install\", \"x\"]",
                 "\\\n", "&&", "ARG X=1", "FROM $X", "RUN --mount=type=cache", "conda install -c nvidia cuda", "\n", "#",
                 "pip3 install", "python -m pip install", "uv pip install", "--index-url", "<<EOF", "EOF"]
NB_TOKENS = ['{"cells": [', "]}", '{"cell_type": "code", "source": [', '"!pip install flash-attn\\n"', '"import torch\\n"',
             '"x.cuda()\\n"', "]}", ",", '"worksheets"', '"nbformat": 3', '"input"', '"outputs": []', "{", "}", "[", "]",
             "null", "1", '"%pip install x"', "\n"]
JSON_TOKENS = ["{", "}", "[", "]", ",", ":", '"default"', '"develop"', '"torch"', '"version"', '"==2.1"', "null", "1",
               "true", "-1e400", "Infinity", "NaN", '"x"', "\n"]


def _nb(cells) -> str:
    return json.dumps({"cells": cells, "nbformat": 4}, indent=1)


def scan_targets() -> list[Target]:
    from mpsready.scan.sources import ALL_SOURCES

    by = {s.name: s for s in ALL_SOURCES}
    req = ["torch>=2\nflash-attn\n", "-r base.txt\n--index-url https://download.pytorch.org/whl/cu121\ntorch\n",
           "numpy ; python_version < '3.11' \\\n  # c\n"]
    pyp = ['[project]\ndependencies = ["torch>=2", "flash-attn"]\n[project.optional-dependencies]\ngpu = ["triton"]\n',
           '[tool.poetry.dependencies]\npython = "^3.10"\ntorch = {version = "^2", source = "cu"}\n[[tool.poetry.source]]\n'
           'name = "cu"\nurl = "https://download.pytorch.org/whl/cu121"\n',
           '[dependency-groups]\ndev = ["pytest", {include-group = "x"}]\n[tool.mpsready]\nselect = ["API"]\n']
    setup = ['from setuptools import setup\nsetup(install_requires=["torch", "flash-attn"], extras_require={"x": ["a"]})\n',
             'from setuptools import setup\nreqs = open("base.txt").read().splitlines()\nsetup(install_requires=reqs)\n']
    cfg = ["[options]\ninstall_requires =\n    torch\n    flash-attn\n[options.extras_require]\ngpu = triton\n",
           "[options]\ninstall_requires = file: base.txt\n"]
    conda = ["name: x\nchannels:\n  - nvidia\ndependencies:\n  - pytorch-cuda=12.1\n  - pip:\n    - flash-attn\n",
             "dependencies:\n  - nvidia::cuda-toolkit\n  - pip:\n    - --index-url https://x/cu118\n"]
    pipfile = ['[[source]]\nurl = "https://download.pytorch.org/whl/cu121"\n[packages]\ntorch = "*"\n[dev-packages]\nx = {version = "1"}\n']
    plock = [json.dumps({"default": {"torch": {"version": "==2.1"}}, "develop": {"pytest": {}}}, indent=4)]
    tlock = ['[[package]]\nname = "torch"\nversion = "2.1.0"\n[[package]]\nname = "triton"\nversion = "2.1"\n']
    docker = ["FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nRUN pip install torch \\\n  flash-attn && conda install -c nvidia x\n",
              'FROM python:3.11\nRUN ["pip", "install", "triton"]\n']
    shell = ["#!/bin/sh\npip install --extra-index-url https://x/cu121 torch\nmamba install -c nvidia cuda\n"]
    nb = [_nb([{"cell_type": "code", "source": ["!pip install flash-attn\n", "import torch\n"]},
               {"cell_type": "markdown", "source": "x"}]),
          json.dumps({"nbformat": 3, "worksheets": [{"cells": [{"cell_type": "code", "input": ["%pip install x\n"]}]}]})]
    out = [
        _source_target(by["requirements"], "requirements.txt", req, REQ_TOKENS),
        _source_target(by["pyproject"], "pyproject.toml", pyp, TOML_TOKENS),
        _source_target(by["setup.py"], "setup.py", setup, ["setup(", ")", "install_requires=", "[", "]", '"torch"', "+",
                                                         "reqs", "open(", "'base.txt'", "\n", "lambda:", "(", "def f():",
                                                         "extras_require=", "{", "}", ":", ","]),
        _source_target(by["setup.cfg"], "setup.cfg", cfg, CFG_TOKENS),
        _source_target(by["conda environment"], "environment.yml", conda, YAML_TOKENS),
        _source_target(by["Pipfile"], "Pipfile", pipfile, TOML_TOKENS),
        _source_target(by["lock file"], "Pipfile.lock", plock, JSON_TOKENS),
        _source_target(by["lock file"], "poetry.lock", tlock, TOML_TOKENS),
        _source_target(by["Dockerfile"], "Dockerfile", docker, DOCKER_TOKENS),
        _source_target(by["shell script"], "install.sh", shell, DOCKER_TOKENS),
        _source_target(by["notebook"], "a.ipynb", nb, NB_TOKENS),
    ]
    from mpsready.scan.sources.notebook import NotebookError, code_cells

    out.append(Target("notebook cells (engine)", lambda t: code_cells(t, skipped=[]), (NotebookError,), nb, NB_TOKENS))

    from mpsready.scan.config import ScanConfig, with_project_config

    cfg_root = _WORK / "cfgproj"
    cfg_root.mkdir(exist_ok=True)

    def config(text: str) -> None:
        (cfg_root / "pyproject.toml").write_bytes(text.encode("utf-8", "surrogatepass"))
        with_project_config(ScanConfig(), cfg_root)

    from mpsready.errors import UsageError

    # an unknown rule code in select/ignore fails closed (issue 13): a usage error, exit 2 with one line
    out.append(Target("[tool.mpsready] config", config, (UsageError,), [
        '[tool.mpsready]\nselect = ["API"]\nignore = "DEP101"\nfail-on = "degrades"\nexclude = ["x/*"]\nmax-file-size = 10\n'],
        TOML_TOKENS))
    out += _entry_targets()
    return out


def _entry_targets() -> list[Target]:
    """The project's declared entries (scan.model.entries): README commands, console scripts. Total: a file
    that cannot be read or parsed names nothing and raises nothing."""
    from mpsready.scan.model.entries import declared_entries
    from mpsready.scan.sources.interface import ProjectFiles

    py = {"sample.py", "train.py", "pkg/__init__.py", "pkg/cli.py", "pkg/__main__.py"}

    def project(name: str, files: tuple[str, ...]):
        root = _WORK / name
        (root / "scripts").mkdir(parents=True, exist_ok=True)

        def run(text: str) -> None:
            for rel in files:
                (root / rel).write_bytes(text.encode("utf-8", "surrogatepass"))
            declared_entries(ProjectFiles(root, 1 << 20), py)
        return run

    md = ["# x\n\n`python sample.py`\n\n```bash\ntorchrun --nproc_per_node=2 train.py \\\n  --lr 1\n"
          "bash scripts/run.sh && python -m pkg\n```\n    accelerate launch train.py\n"]
    other = ['[project]\nname = "x"\n[project.scripts]\nx = "pkg.cli:main"\n',
             "from setuptools import setup\nsetup(entry_points={'console_scripts': ['x=pkg.cli:main']})\n",
             "[options.entry_points]\nconsole_scripts =\n    x = pkg.cli:main\n", "Run ``python -m pkg`` or::\n\n  python train.py\n"]
    tokens = ["python ", "python3 -m ", "torchrun ", "accelerate launch ", "deepspeed ", "bash ", "scripts/run.sh",
              "sample.py", "pkg.cli", "-m", "\\\n", "`", "```", "~~~", "    ", "'", '"', "&&", "|", ";", "$(", "=",
              "[project.scripts]", "setup(", "entry_points=", "{", "}", "[", "]", "console_scripts", ":"]
    return [Target("README.md commands (model.entries)", project("readme-md", ("README.md", "scripts/run.sh")), (),
                   md, tokens),
            Target("README.rst and console scripts (model.entries)",
                   project("readme-rst", ("README.rst", "pyproject.toml", "setup.py", "setup.cfg")), (), other, tokens)]


def _manifest() -> str:
    return json.dumps({"schema": {"name": "mpsready.record", "version": 1}, "mpsready": "0.1.0", "created": "2026",
                       "basis": "observed", "device": "cpu", "steps": 2, "seed": {"value": 0, "how": "x"},
                       "stages": [{"stage": "build", "status": "passed", "seconds": 0.1}],
                       "step_metrics": [{"index": 0, "loss": 2.3, "seconds": 0.5, "peak_memory_bytes": 100}],
                       "memory": {"peak_bytes": 10}, "fallback": {"enabled": False, "ops": {"aten::x": 2}},
                       "raw_tensors": False, "tensor_count": 1, "findings": []}, indent=1)


def _entry() -> str:
    return json.dumps({"key": "param:w", "kind": "param", "name": "w", "step": 0, "order": 0, "shape": [2, 3],
                       "dtype": "float32", "stats": {"numel": 6, "mean": 0.1, "std": 1.0, "min": -1.0, "max": 1.0,
                                                     "l2": 2.0, "nan": 0, "inf": 0}, "checksum": "ab"})


def record_targets() -> list[Target]:
    from mpsready.compare.tensorio import RawTensorError, RawTensorFile
    from mpsready.record.layout import RecordError, RunRecord
    from mpsready.report.evidence import EvidenceError
    from mpsready.report.evidence import compare as ev_compare
    from mpsready.report.evidence import env as ev_env
    from mpsready.report.evidence import record as ev_record
    from mpsready.report.evidence import scan as ev_scan
    from mpsready.report.evidence import trace as ev_trace

    rec = _WORK / "rec"
    rec.mkdir(exist_ok=True)

    def manifest(text: str) -> None:
        _file("rec/record.json", text)
        r = RunRecord.open(rec)
        ev_record.from_manifest(r.manifest, str(rec))

    def entries(text: str) -> None:
        _file("rec/tensors.jsonl", text)
        RunRecord(rec, {}).entries()

    def raw(text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        header = data.split(b"\n", 1)[0]
        p = _WORK / "raw.safetensors"
        p.write_bytes(len(header).to_bytes(8, "little") + header + data[len(header):] + b"\0" * 64)
        with RawTensorFile(p) as f:
            for info in f.tensors.values():
                if info.supported:
                    f.read(info.name)

    def evidence(text: str) -> None:
        p = _file("stage.json", text)
        for mod, schema in ((ev_scan, "mpsready.scan"), (ev_env, "mpsready.env"), (ev_trace, "mpsready.trace"),
                            (ev_compare, "mpsready.compare")):
            try:
                mod.load(p)
            except EvidenceError:
                pass
            try:  # the same document under each schema name: the adapters' tolerance, not only the envelope check
                doc = json.loads(text)
                if isinstance(doc, dict):
                    doc["schema"] = {"name": schema, "version": 1}
                    _file("stage2.json", json.dumps(doc))
                    mod.load(_WORK / "stage2.json")
            except (ValueError, RecursionError, EvidenceError):
                pass

    raw_seed = json.dumps({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
                           "__metadata__": {"a": "b"}}) + "\n"
    rec_tokens = ["{", "}", "[", "]", ",", ":", '"seconds"', '"loss"', '"stages"', '"step_metrics"', '"memory"',
                  '"peak_bytes"', "1" + "0" * 400, "7" * 5000, "-Infinity", "NaN", "1e400", '"x"', "-1", "null", "true",
                  '"schema"', '"name"', '"mpsready.record"', '"version"', "1", '"stats"', '"numel"', '"shape"']
    scan_doc = json.dumps({"schema": {"name": "mpsready.scan", "version": 1}, "findings": [
        {"code": "API101", "severity": "blocker", "message": "m", "location": {"path": "a.py", "line": 1}}],
        "outlook": "runs_on_mac", "files_scanned": 3})
    return [
        Target("record.json (RunRecord.open + report evidence)", manifest, (RecordError,), [_manifest()], rec_tokens),
        Target("tensors.jsonl (RunRecord.entries)", entries, (RecordError,), [_entry() + "\n" + _entry() + "\n"], rec_tokens),
        Target("raw tensor file (compare.tensorio)", raw, (RawTensorError,), [raw_seed],
               ['"dtype"', '"F32"', '"BF16"', '"shape"', '"data_offsets"', "[", "]", "{", "}", "-1", "1" * 30, ",", ":"]),
        Target("stage outputs (report evidence load)", evidence, (EvidenceError,), [scan_doc], rec_tokens),
    ]


def all_targets() -> list[Target]:
    return scan_targets() + record_targets()


def mutate(rng: random.Random, target: Target, max_ops: int = 6) -> str:
    """One input for ``target``: a seed or token soup, then up to ``max_ops`` random edits (insert a token or
    hostile fragment, delete, duplicate or swap a slice)."""
    kind = rng.random()
    if kind < 0.15 or not target.seeds:
        text = "".join(rng.choice(target.tokens + HOSTILE[:4]) for _ in range(rng.randint(0, 40)))
    elif kind < 0.2:
        text = "".join(chr(rng.randint(0, 0x2FF)) for _ in range(rng.randint(0, 200)))
    else:
        text = rng.choice(target.seeds)
    for _ in range(rng.randint(0, max_ops)):
        op = rng.random()
        i = rng.randint(0, len(text))
        j = rng.randint(i, min(len(text), i + 40))
        if op < 0.45:
            frag = rng.choice(target.tokens) if rng.random() < 0.7 else rng.choice(HOSTILE)
            text = text[:i] + frag + text[i:]
        elif op < 0.65:
            text = text[:i] + text[j:]
        elif op < 0.8:
            text = text[:i] + text[i:j] * rng.randint(2, 50) + text[j:]
        elif op < 0.9 and j > i:
            k = rng.randint(0, len(text))
            text = text[:k] + text[i:j] + text[k:]
        else:
            text = text[:i] + chr(rng.randint(0, 0x10FFFF) if rng.random() < 0.2 else rng.randint(0, 127)) + text[i:]
    return text

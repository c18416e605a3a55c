"""Issue 39 item 2: a thinner start of ``run``'s child. ``torch._dynamo`` (seconds to import) is loaded only when
the program uses it, and then Dynamo's shim is back around the dispatch mode; the child ends without tearing its
modules down, after the program's threads and ``atexit`` handlers, as the interpreter's exit runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, program: str, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    (tmp_path / "prog.py").write_text(program)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.run([sys.executable, "-m", "mpsready", "run", "-q", *extra, "--format", "json", "-o", "r.json",
                           "--", "python", "prog.py"], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          timeout=300)
    return proc, json.loads((tmp_path / "r.json").read_text())


def test_a_program_that_never_compiles_never_loads_dynamo(tmp_path):
    proc, doc = _run(tmp_path, "import sys, torch\nx = torch.ones(3, device='mps') * 2\n"
                               "print('dynamo loaded', 'torch._dynamo' in sys.modules, x.sum().item())\n")
    assert doc["outcome"] == "completed", proc.stderr
    assert "dynamo loaded False 6.0" in proc.stdout


def test_a_program_that_runs_dynamo_itself_gets_the_shim_back(tmp_path):
    # without the shim, Dynamo traces into the dispatch mode: "Cannot access accelerator device when none is
    # available" (InternalTorchDynamoError)
    proc, doc = _run(tmp_path, "import torch, torch._dynamo\n"
                               "def f(x):\n    return (x * 2).sin() + 1\n"
                               "g = torch._dynamo.optimize('eager')(f)\n"
                               "x = torch.randn(8, device='mps')\n"
                               "print('same', bool((g(x) == f(x)).all()))\n"
                               "print('compiled', bool((torch.compile(f)(x) == f(x)).all()))\n")
    assert doc["outcome"] == "completed", proc.stderr
    assert "same True\ncompiled True\n" in proc.stdout


def test_the_programs_threads_and_atexit_handlers_run_before_the_child_ends(tmp_path):
    proc, doc = _run(tmp_path, "import atexit, threading, time, torch\n"
                               "atexit.register(lambda: print('atexit ran', flush=True))\n"
                               "def late():\n    time.sleep(0.3)\n    print('thread done', flush=True)\n"
                               "threading.Thread(target=late).start()\n"
                               "print('main done', flush=True)\n")
    assert proc.returncode == 0 and doc["outcome"] == "completed", proc.stderr
    assert proc.stdout == "main done\nthread done\natexit ran\n"

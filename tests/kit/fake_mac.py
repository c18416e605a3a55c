"""A results archive of ``run-on-mac.sh`` as a borrowed Mac would bring it back, faked with PyTorch's real MPS
texts (``mpsready.record.mps``): an operator without an MPS kernel (NotImplementedError), the CPU-fallback
warning's operator counted in the record, a float64 refusal in a test, a CUDA-only dependency that fails to
install. The env, record, trace and compare documents come from ``tests/report/fixtures.py`` (the fakes the
report tests use)."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from mpsready.kit import onmac
from mpsready.record.mps import FLOAT64_REFUSAL, NOT_IMPLEMENTED
from mpsready.schema import envelope
from tests.report import fixtures as fx

MACHINE = "lab-mac-mini"
ERFINV_ERROR = NOT_IMPLEMENTED.format(op="aten::erfinv")
INSTALLS = (("install torch==2.13.0", 0), ("install numpy>=1.24", 0), ("install flash-attn==2.5.8", 1),
            ("install einops>=0.7", 0))


def _step(name: str, exit_code: int) -> dict:
    return {"name": name, "command": ["python", "-m", "pip"], "exit": exit_code, "seconds": 1.0, "timed_out": False,
            "error": None}


def results_dir(tmp: Path, kit: Path | None = None, *, device: str = "mps", dry_run: bool = False,
                reference_failed: int | None = None) -> Path:
    res = tmp / "results"
    res.mkdir(parents=True)
    if kit is not None:
        onmac.check(str(kit), str(res))
    mac = device == "mps" and not dry_run
    fx.dump(res / "env.json", fx.env_doc(mac=mac))
    if mac:
        fx.write_record(res / "record-device", "mps", failed_stage="forward", error=ERFINV_ERROR,
                        fallback={"enabled": True, "checked": True, "calls": {"aten::sin": 3},
                                  "warned_ops": ["aten::sin"]})
    else:
        fx.write_record(res / "record-device", "cpu")
    fx.write_record(res / "record-cpu", "cpu")
    fx.dump(res / "compare.json", fx.compare_doc("cpu", device))
    if reference_failed is not None:  # the kit carried a CUDA reference: the Mac compared its record with it
        fx.dump(res / "compare-reference.json", fx.compare_doc("cuda", device, failed=reference_failed))
    fx.dump(res / "trace-device.json", fx.trace_doc(
        ops=[fx.op("aten::_ctc_loss.Tensor"), fx.op("aten::linear"), fx.op("aten::addmm")], device=device))
    tests = [{"nodeid": "tests/test_model.py::test_double", "outcome": "failed", "exception": "TypeError",
              "message": FLOAT64_REFUSAL, "mps_kind": "float64_refused", "op": None},
             {"nodeid": "tests/test_model.py::test_shapes", "outcome": "passed"}]
    fx.dump(res / "tests.json", envelope("mpsready.kit.tests", 1, basis="observed", tests=tests, fallbacks=[]))
    steps = [_step(n, c) for n, c in INSTALLS] + [_step("env", 0), _step("record-device", 0)]
    fx.dump(res / "run.json", envelope(onmac.RESULTS_SCHEMA, 1, basis="observed", device=device, kit_device="mps",
                                       dry_run=dry_run, machine=MACHINE, steps=steps))
    return res


def pack(res: Path, archive: Path) -> Path:
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(res, arcname="results")
    return archive


def results_archive(tmp: Path, kit: Path | None = None, **kw) -> Path:
    return pack(results_dir(tmp / "mac", kit, **kw), tmp / "results.tar.gz")


def project(root: Path) -> Path:
    """A small research project with code, a data folder, a checkpoint, a CSV, an ignored log and a notebook."""
    (root / "model").mkdir(parents=True)
    (root / "model" / "__init__.py").write_text("", encoding="utf-8")
    (root / "model" / "net.py").write_text("import torch\n\n\ndef build():\n    return torch.nn.Linear(4, 2)\n",
                                           encoding="utf-8")
    (root / "step.py").write_text("from model.net import build\n\n\ndef step():\n    return build()\n",
                                  encoding="utf-8")
    (root / "requirements.txt").write_text("torch>=2.3\nnumpy>=1.24\n# a comment\n-e .\n", encoding="utf-8")
    (root / "README.md").write_text("# tiny\n", encoding="utf-8")
    (root / "data").mkdir()
    (root / "data" / "train.bin").write_bytes(b"\x00" * 64)
    (root / "data" / "labels.txt").write_text("cat\ndog\n", encoding="utf-8")
    (root / "model.ckpt").write_bytes(b"\x01" * 32)
    (root / "results.csv").write_text("epoch,loss\n1,0.5\n", encoding="utf-8")
    (root / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (root / "train.log").write_text("loss 0.5\n", encoding="utf-8")
    (root / "explore.ipynb").write_text(json.dumps({"cells": [], "nbformat": 4, "nbformat_minor": 5}),
                                        encoding="utf-8")
    (root / ".env").write_text("TOKEN=x\n", encoding="utf-8")
    return root

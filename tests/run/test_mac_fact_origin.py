"""Exceptions the emulator did not raise but a fact of the Mac it imposes caused are Mac failures, not the
program's own: a pickling error of the spawn start method (macOS spawns, Linux forks), a ``torch.mps`` API no
release has, asked for by PyTorch's own code. Each with a look-alike that stays the program's own (inconclusive)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from .helpers import emulate, write  # noqa: E402

LAMBDA_WORKER = '''import torch
from torch.utils.data import DataLoader, TensorDataset

if __name__ == "__main__":
    data = TensorDataset(torch.randn(8, 3), torch.arange(8))
    loader = DataLoader(data, batch_size=4, num_workers=1, collate_fn=lambda batch: batch)
    first = next(iter(loader))
    print(len(first))
'''

OWN_PICKLING = '''import pickle
import torch

x = torch.ones(2, device="mps")
pickle.dumps(lambda: x)
'''

# torch.cuda.device(None) asks torch._utils for the current index of the available device type: on a Mac that is
# mps, and torch.mps has no current_device (torch/_utils.py _get_current_device_index, 2.13): raised inside torch
MPS_API = '''import torch

x = torch.ones(2, device="mps")
with torch.cuda.device(None):
    y = x * 2
'''

OWN_ATTRIBUTE = '''import torch

class Config:
    pass

x = torch.ones(2, device="mps")
Config().lr
'''


def _failure(doc):
    assert doc["outcome"] == "failed", (doc["outcome"], doc.get("program_error"))
    (f,) = doc["failures"]
    return f["kind"], f["exception"], f["location"]["line"]


def test_a_lambda_handed_to_a_spawned_dataloader_worker_is_the_macs_failure(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, LAMBDA_WORKER))
    assert _failure(doc) == ("spawn", "PicklingError", 7)
    assert "pickle" in doc["failures"][0]["message"].lower()


def test_a_pickling_error_of_the_programs_own_is_not_the_macs(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, OWN_PICKLING))
    assert doc["outcome"] == "inconclusive" and doc["failures"] == []
    assert doc["program_error"]["exception"] in ("PicklingError", "AttributeError")


@pytest.mark.parametrize("release", ["2.5", "2.13"])
def test_an_mps_api_no_release_has_asked_for_by_pytorch_itself_is_the_macs_failure(tmp_path, release):
    _r, doc, _o, _e = emulate(write(tmp_path, MPS_API), torch=release)
    assert _failure(doc) == ("release_api", "AttributeError", 4)
    assert doc["failures"][0]["message"] == "module 'torch.mps' has no attribute 'current_device'"


def test_an_attribute_error_on_the_programs_own_object_is_not_the_macs(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, OWN_ATTRIBUTE))
    assert doc["outcome"] == "inconclusive" and doc["program_error"]["exception"] == "AttributeError"
